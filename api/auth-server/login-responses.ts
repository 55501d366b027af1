import type { Request, Response } from 'express';
import { generateChallenge } from '../../core/passkeys/passkey-challenge.js';
import type { LoginState, LoginStatesRepository } from '../../core/sign-in/login-states.repository.js';
import type { LoginProblem } from '../../core/sign-in/sign-in-steps.js';
import { toHttpRefusal } from '../errors/http-error-mapping.js';
import { renderPage, type PageData, type PageName } from './login-pages.js';

/** The app being signed in to, as its pages show it. */
export interface PageClient {
  name: string;
  /** Where the app's redirect URI may take the last form (login-pages.ts formActionSourceOf). */
  redirectTarget: string[];
}

/** What the login page says about each problem (the person fixes it there). */
function problemText(problem: LoginProblem): string {
  switch (problem.kind) {
    case 'bad-user-id':
      return 'Enter your user id: 1 to 64 letters, digits or . _ @ -';
    case 'bad-code':
      return 'Enter the 6 digits of the code we sent.';
    case 'wrong-code':
      return `That code is not right. ${problem.attemptsLeft} ${problem.attemptsLeft === 1 ? 'attempt' : 'attempts'} left.`;
    case 'code-locked':
      return 'Too many wrong codes. Send a new code to try again.';
    case 'code-expired':
      return 'This code has expired. Send a new code to try again.';
    case 'passkey-incomplete':
      return 'The passkey answer was incomplete. Please try again.';
    case 'passkey-out-of-date':
      return 'That passkey sign-in is out of date. Please try again.';
    case 'unknown-passkey':
      return 'This passkey is not registered for this app. Use another passkey, or continue with your user id.';
    case 'passkey-not-verified':
      return 'That passkey could not be verified. Try again, or continue with your user id.';
    case 'form-incomplete':
      return 'Something was missing from that form. Please try again.';
    case 'rate-limited':
      return problem.refusal.message;
  }
}

const STOPPED_PAGES: Record<'sign-in-locked' | 'not-active' | 'refused', { title: string; message: string }> = {
  // User ids that do not exist lock the same way, so this page tells a stranger only what their
  // own failures did; it tells the person what to do.
  'sign-in-locked': {
    title: 'Sign-in is locked',
    message: 'Sign-in to this account is locked because of too many wrong codes in a row. Contact your administrator to unlock it.',
  },
  'not-active': {
    title: 'Activate your account first',
    message:
      'Your account is not active yet. Activate it with the activation code you received when you were enrolled, then sign in again.',
  },
  refused: { title: 'Sign-in refused', message: 'This account cannot sign in. Contact your administrator.' },
};

/** The HTML answers of the sign-in pages: each page its own CSP, never cached, nothing loaded from elsewhere. */
export function createLoginResponses(deps: { states: Pick<LoginStatesRepository, 'setPasskeyChallenge'>; rpId: string; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  function send(res: Response, status: number, name: PageName, data: PageData, formTargets: string[] = []): void {
    const page = renderPage(name, data, formTargets);
    res
      .status(status)
      .set({
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': page.csp,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      })
      .send(page.html);
  }

  const selfUrl = (req: Request) => req.originalUrl.split('?')[0] ?? '';

  /** The user-id page (with a fresh passkey challenge) or, once a user id was given, the code page. */
  async function login(req: Request, res: Response, state: LoginState, client: PageClient, extra: Partial<PageData>, status: number) {
    const action = selfUrl(req);
    if (state.userId !== undefined) {
      const data = { title: 'Enter your code', clientName: client.name, action, csrf: state.csrf, userId: state.userId, ...extra };
      return send(res, status, 'login-code', data, client.redirectTarget);
    }
    // Each showing of the page has its own passkey challenge, good for one answer.
    const challenge = generateChallenge();
    const offered = await deps.states.setPasskeyChallenge(state.uid, challenge, now());
    const data: PageData = {
      title: 'Sign in',
      clientName: client.name,
      action,
      csrf: state.csrf,
      // After an error the passkeys are offered by the button only, never straight away in the
      // field's suggestions: a browser that answers those by itself would go round in circles.
      ...(offered ? { passkey: { challenge, rpId: deps.rpId, conditional: extra.error === undefined } } : {}),
      ...extra,
    };
    return send(res, status, 'login-user', data, client.redirectTarget);
  }

  return {
    send,

    /** The login page, with what went wrong (400, or 429 with the wait) or a notice. */
    loginPage(
      req: Request,
      res: Response,
      state: LoginState,
      client: PageClient,
      options: { problem?: LoginProblem; notice?: 'code-sent' } = {},
    ) {
      const { problem, notice } = options;
      if (notice === 'code-sent')
        return login(req, res, state, client, { notice: 'A new code is on its way. Codes sent earlier no longer work.' }, 200);
      if (!problem) return login(req, res, state, client, {}, 200);
      if (problem.kind === 'rate-limited') res.set(toHttpRefusal(problem.refusal)?.headers ?? {});
      const status = problem.kind === 'rate-limited' ? 429 : 400;
      return login(
        req,
        res,
        state,
        client,
        { error: problemText(problem), ...(problem.kind === 'bad-user-id' ? { userId: problem.userId } : {}) },
        status,
      );
    },

    /** The sign-in cannot go on (locked, not active, refused): what to do, and a way to start over. */
    stoppedPage(req: Request, res: Response, reason: keyof typeof STOPPED_PAGES, client: PageClient, state: LoginState) {
      const data = { ...STOPPED_PAGES[reason], clientName: client.name, action: selfUrl(req), csrf: state.csrf, restart: true };
      send(res, 403, 'message', data, client.redirectTarget);
    },

    expiredPage(res: Response) {
      send(res, 400, 'message', {
        title: 'This sign-in has expired',
        message: 'This sign-in page has expired or was opened in another browser. Go back to the app and sign in again.',
      });
    },

    staleFormPage(res: Response, client: PageClient) {
      send(res, 403, 'message', {
        title: 'Please try again',
        clientName: client.name,
        message: 'This form could not be accepted (its security token is missing or out of date). Go back to the app and sign in again.',
      });
    },

    errorPage(res: Response, errorId: string, status: number) {
      send(res, status, 'message', {
        title: 'Sign-in is unavailable',
        message: `Sign-in could not continue. Please try again in a moment. (reference ${errorId})`,
      });
    },
  };
}
