import type { RequestHandler } from 'express';

export interface BrowserWindowPaths {
  /** The authorization endpoint under the authorization server's mount path (its resume is under it). */
  authorization: string;
  /** The sign-in pages' path prefix under the mount path (`/interaction`). */
  interaction: string;
  /** The sign-out endpoint under the mount path (its confirmation and signed-out page are under it). */
  endSession: string;
}

/** Where a browser says a request's answer goes (Fetch Metadata) when it is shown as a page of its own. */
const OWN_PAGE = 'document';
/** A page inside another page: the only sign-in request a frame may make is a silent one (`prompt=none`). */
const FRAMES = new Set(['iframe', 'frame']);
/** A page fetched ahead of a navigation that may never come (`Sec-Purpose: prefetch`, also `prefetch;prerender`). */
const SPECULATIVE = /\bprefetch\b/i;

/**
 * Sign-in and sign-out pages are pages of their own in the browser's window or tab. A request the
 * browser says is anything else (`Sec-Fetch-Dest`: an image, a script, a style, a `fetch`, an
 * embedded object, a frame), or a page it fetches ahead of a navigation that may never come
 * (`Sec-Purpose: prefetch`, which another site's speculation rules ask for), is one another
 * site's page made the person's browser send without them:
 * `<img src=".../oauth/authorize?client_id=...">` a hundred times over. Each would store an
 * interaction (or a session, for the sign-out page) and count against the budget of the person's
 * address (sign-in-start-limit.ts, RATE_LIMIT_SIGN_IN_STARTS_PER_IP), so a page left open on one
 * computer of an office would keep the whole office from signing in. Such requests are answered
 * 400 at once: nothing is read, stored or counted for them, and nobody sees the answer (a browser
 * shows no image, and no frame of these pages: they forbid framing; a prefetch refused is fetched
 * again if the person does go to the page).
 *
 * An app's silent sign-in in a hidden frame (GET with `prompt=none`) goes on as before: it never
 * shows a page nor stores an interaction. Browsers that send no Fetch Metadata (before 2023 for
 * Safari), and programs, are served as before; so are pages of their own (`document`).
 */
export function browserWindowOnly(paths: BrowserWindowPaths): RequestHandler {
  // Express matches letters in any case and the provider's router too (and one trailing slash).
  const authorization = paths.authorization.toLowerCase();
  const prefixes = [authorization, paths.interaction.toLowerCase(), paths.endSession.toLowerCase()];
  const isSignInPage = (lower: string) => prefixes.some((prefix) => lower === prefix || lower.startsWith(`${prefix}/`));
  const isSilentSignIn = (lower: string, method: string, prompt: unknown) =>
    method === 'GET' && (lower === authorization || lower === `${authorization}/`) && prompt === 'none';

  return (req, res, next) => {
    const dest = req.get('sec-fetch-dest');
    const speculative = SPECULATIVE.test(req.get('sec-purpose') ?? req.get('purpose') ?? '');
    if ((dest === undefined || dest === OWN_PAGE) && !speculative) return next();
    const lower = req.path.toLowerCase();
    if (!isSignInPage(lower)) return next();
    if (dest !== undefined && FRAMES.has(dest) && !speculative && isSilentSignIn(lower, req.method, req.query.prompt)) return next();
    res
      .status(400)
      .set('Cache-Control', 'no-store')
      .type('text/plain')
      .send('Sign-in pages open only as a page of their own in a browser window or tab.');
  };
}
