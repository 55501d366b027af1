import type { Request, Response } from 'express';
import { generateChallenge } from '../../core/passkeys/passkey-challenge.js';
import type { LoginState, LoginStatesRepository } from '../../core/sign-in/login-states.repository.js';
import type { RateLimitedError } from '../../core/platform/errors/app-error.js';
import type { LoginProblem } from '../../core/sign-in/sign-in-steps.js';
import { toHttpRefusal } from '../errors/http-error-mapping.js';
import type { Locale } from '../../core/platform/locales/shipped-locales.js';
import { renderPage, type PageData, type PageName } from './login-pages.js';
import { translate, translateCount } from './page-catalogs.js';
import { describeOAuthError, REDIRECT_URI_NOT_REGISTERED } from './oauth-error-message.js';
import { loginCodeLifetime } from '../../core/sign-in/login-code-lifetime.js';
import { challengeStillAnswering } from '../../core/sign-in/passkey-challenge-lifetime.js';

/** The app being signed in to, as its pages show it. */
export interface PageClient {
  name: string;
  /** Where the app's redirect URI may take the last form (login-pages.ts formActionSourceOf). */
  redirectTarget: string[];
}

/** What the login page says about each problem (the person fixes it there). */
function problemText(locale: Locale, problem: LoginProblem): string {
  switch (problem.kind) {
    case 'bad-user-id':
      return translate(locale, 'problem.badUserId');
    case 'bad-code':
      return translate(locale, 'problem.badCode');
    case 'wrong-code':
      return translateCount(locale, 'problem.wrongCode', problem.attemptsLeft);
    case 'code-locked':
      return translate(locale, 'problem.codeLocked');
    case 'code-expired':
      return translate(locale, 'problem.codeExpired');
    case 'passkey-incomplete':
      return translate(locale, 'problem.passkeyIncomplete');
    case 'passkey-out-of-date':
      return translate(locale, 'problem.passkeyOutOfDate');
    case 'unknown-passkey':
      return translate(locale, 'problem.unknownPasskey');
    case 'passkey-not-verified':
      return translate(locale, 'problem.passkeyNotVerified');
    case 'form-incomplete':
      return translate(locale, 'problem.formIncomplete');
    case 'rate-limited':
      // The page says the wait in its own words; the API's refusals keep the English message.
      // "Too many attempts" is about the steps and codes of the user id given; an address that
      // posted too many forms gets the words of its own 429 page (tooManyRequestsPageData): the
      // sign-in did nothing wrong and the account is fine.
      return problem.budget === 'address'
        ? translateCount(locale, 'tooManyRequests.message', problem.refusal.retryAfterSeconds)
        : translateCount(locale, 'problem.rateLimited', problem.refusal.retryAfterSeconds);
  }
}

/**
 * The page an address gets once a budget of its own is spent (sign-ins started and sign-in pages
 * loaded, or forms posted with a sign-in that can no longer go on): what happened in the person's
 * words, the wait (the Retry-After value) and that their account is fine. Not the code page's
 * "Too many attempts", which is about codes typed. No way back to the app: when the authorization
 * request is refused, its redirect URI has not been checked yet. A form post refused by the
 * address's budget while its sign-in can go on gets its login page again, saying this message.
 */
export function tooManyRequestsPageData(locale: Locale, refusal: RateLimitedError): { locale: Locale; title: string; message: string } {
  return {
    locale,
    title: translate(locale, 'tooManyRequests.title'),
    message: translateCount(locale, 'tooManyRequests.message', refusal.retryAfterSeconds),
  };
}

// User ids that do not exist lock the same way, so the locked page tells a stranger only what
// their own failures did; it tells the person what to do.
const STOPPED_PAGES = {
  'sign-in-locked': 'stopped.locked',
  'not-active': 'stopped.notActive',
  refused: 'stopped.refused',
} as const;

/** The HTML answers of the sign-in pages: each page its own CSP, never cached, nothing loaded from elsewhere. */
export function createLoginResponses(deps: {
  states: Pick<LoginStatesRepository, 'setPasskeyChallenge'>;
  rpId: string;
  /** How long a sent login code lives (LOGIN_CODE_TTL_SECONDS): the code page says it. */
  codeTtlSeconds: number;
  now?: () => Date;
}) {
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

  /** Each showing of the page has its own passkey challenge, good for one answer; none when the sign-in is gone. */
  async function newChallenge(state: LoginState): Promise<string | undefined> {
    const challenge = generateChallenge();
    return (await deps.states.setPasskeyChallenge(state.uid, challenge, now())) ? challenge : undefined;
  }

  /**
   * The user-id page or, once a user id was given, the code page. The user-id page gets a fresh
   * passkey challenge (`new`), or offers the one stored while it still answers (`stored`: a post
   * refused before any step writes nothing).
   */
  async function login(
    req: Request,
    res: Response,
    locale: Locale,
    state: LoginState,
    client: PageClient,
    extra: Partial<PageData>,
    status: number,
    challengeOf: 'new' | 'stored' = 'new',
  ) {
    const action = selfUrl(req);
    if (state.userId !== undefined) {
      const data = {
        locale,
        title: translate(locale, 'code.title'),
        clientName: client.name,
        action,
        csrf: state.csrf,
        userId: state.userId,
        codeLifetime: loginCodeLifetime(locale, deps.codeTtlSeconds),
        ...extra,
      };
      return send(res, status, 'login-code', data, client.redirectTarget);
    }
    const challenge = challengeOf === 'new' ? await newChallenge(state) : challengeStillAnswering(state, now());
    const data: PageData = {
      locale,
      title: translate(locale, 'user.title'),
      clientName: client.name,
      action,
      csrf: state.csrf,
      // After an error the passkeys are offered by the button only, never straight away in the
      // field's suggestions: a browser that answers those by itself would go round in circles.
      ...(challenge !== undefined ? { passkey: { challenge, rpId: deps.rpId, conditional: extra.error === undefined } } : {}),
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
      locale: Locale,
      state: LoginState,
      client: PageClient,
      options: { problem?: LoginProblem; notice?: 'code-sent' } = {},
    ) {
      const { problem, notice } = options;
      if (notice === 'code-sent') return login(req, res, locale, state, client, { notice: translate(locale, 'notice.codeSent') }, 200);
      if (!problem) return login(req, res, locale, state, client, {}, 200);
      if (problem.kind === 'rate-limited') res.set(toHttpRefusal(problem.refusal)?.headers ?? {});
      const status = problem.kind === 'rate-limited' ? 429 : 400;
      // A post the address's budget refused took no step and writes nothing, not even a challenge:
      // each post of a flood past that budget costs the two reads of its CSRF check and no more.
      const refusedBeforeAnyStep = problem.kind === 'rate-limited' && problem.budget === 'address';
      return login(
        req,
        res,
        locale,
        state,
        client,
        { error: problemText(locale, problem), ...(problem.kind === 'bad-user-id' ? { userId: problem.userId } : {}) },
        status,
        refusedBeforeAnyStep ? 'stored' : 'new',
      );
    },

    /** The sign-in cannot go on (locked, not active, refused): what to do, and a way to start over. */
    stoppedPage(req: Request, res: Response, locale: Locale, reason: keyof typeof STOPPED_PAGES, client: PageClient, state: LoginState) {
      const key = STOPPED_PAGES[reason];
      const data = {
        locale,
        title: translate(locale, `${key}.title`),
        message: translate(locale, `${key}.message`),
        clientName: client.name,
        action: selfUrl(req),
        csrf: state.csrf,
        restart: true,
      };
      send(res, 403, 'message', data, client.redirectTarget);
    },

    expiredPage(res: Response, locale: Locale) {
      send(res, 400, 'message', { locale, title: translate(locale, 'expired.title'), message: translate(locale, 'expired.message') });
    },

    /** The authorization server's own error page for a redirect URI the app no longer has: nothing goes to it. */
    redirectUriNotRegisteredPage(res: Response, locale: Locale) {
      send(res, 400, 'message', {
        locale,
        title: translate(locale, 'oauthError.title'),
        message: describeOAuthError(locale, 'invalid_redirect_uri', REDIRECT_URI_NOT_REGISTERED),
      });
    },

    /**
     * The address's budget of sign-in pages loaded, or of forms posted, is spent and the request
     * is refused before its sign-in is read: 429 with Retry-After, and no form.
     */
    tooManyPage(res: Response, locale: Locale, refusal: RateLimitedError) {
      res.set(toHttpRefusal(refusal)?.headers ?? {});
      send(res, 429, 'message', tooManyRequestsPageData(locale, refusal));
    },

    staleFormPage(res: Response, locale: Locale, client: PageClient) {
      send(res, 403, 'message', {
        locale,
        title: translate(locale, 'staleForm.title'),
        clientName: client.name,
        message: translate(locale, 'staleForm.message'),
      });
    },

    errorPage(res: Response, locale: Locale, errorId: string, status: number) {
      send(res, status, 'message', {
        locale,
        title: translate(locale, 'unavailable.title'),
        message: translate(locale, 'unavailable.message', { reference: errorId }),
      });
    },
  };
}
