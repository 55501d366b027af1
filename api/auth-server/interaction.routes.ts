import { timingSafeEqual } from 'node:crypto';
import { finished } from 'node:stream';
import express, { Router, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import type { WorkAfterAnswers } from '../../core/platform/lifecycle/work-after-answers.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import type { LoginLimits } from '../../core/sign-in/login-rate-limits.js';
import type { SignInStartLimits } from '../../core/sign-in/sign-in-start-limits.js';
import type { LoginStatesRepository } from '../../core/sign-in/login-states.repository.js';
import type { LoginService } from '../../core/sign-in/login.service.js';
import { createSignInSteps, type SignInStepsDeps } from '../../core/sign-in/sign-in-steps.js';
import { accountIdOf, userOfAccountId, type SignInClient } from '../../core/sign-in/sign-in-users.js';
import { errorPageOf } from '../errors/error-pipeline.js';
import { rateLimitHeaders } from '../errors/rate-limit-headers.js';
import { AUTH_SERVER_PATH } from './auth-server.js';
import { grantConsent, scopesAsked, type InteractionDetails } from './consent-grant.js';
import { createLoginResponses } from './login-responses.js';
import { scopeLabel } from './scope-labels.js';
import { translate } from './page-catalogs.js';
import { formActionSourceOf } from './login-pages.js';
import { enterpriseOfClient, isFirstParty } from './oidc-adapter.js';
import { redirectUriStillRegistered } from './redirect-uri-still-registered.js';
import { parsedWith } from '../middleware/body-parser-errors.js';
import { chooseLocale } from '../../core/platform/locales/locale-negotiation.js';
import type { Locale } from '../../core/platform/locales/shipped-locales.js';

export interface InteractionServices {
  login: LoginService;
  /** Where the code of a user-id step is sent from once the answer has gone; shutdown waits for it. */
  afterAnswers: WorkAfterAnswers;
  states: LoginStatesRepository;
  limits: LoginLimits;
  /** Sign-ins started and sign-in pages loaded per address: each page load counts. */
  startLimits: SignInStartLimits;
  logger: Logger;
  /** Sign-in with a passkey: the relying party id the page asks the browser for, and the check of its answer. */
  passkeys: SignInStepsDeps['passkeys'] & { rpId: string };
  /** The pages' language when neither the app nor the browser names a shipped one (SIGN_IN_DEFAULT_LOCALE). */
  defaultLocale: Locale;
  /** How long a sent login code lives (LOGIN_CODE_TTL_SECONDS), as the code page says. */
  codeTtlSeconds: number;
}

function sameToken(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The HTTP edge of the login interaction and the consent page: server-rendered forms that post
 * back to their own URL, each with its own CSRF token. It reads the form, asks core/sign-in
 * (sign-in-steps.ts) what comes next, and renders that as a page or a redirect.
 */
export function interactionRoutes(
  getProvider: () => Promise<Provider>,
  services: InteractionServices,
  setForwardedHeaders: (req: Request) => void,
): Router {
  const router = Router();
  const path = `${AUTH_SERVER_PATH}/interaction/:uid`;
  // Room for a passkey answer (up to 6000 characters, percent-encoded) besides the short fields.
  const form = parsedWith(express.urlencoded({ extended: false, limit: '80kb', parameterLimit: 20 }));
  const steps = createSignInSteps(services);
  const pages = createLoginResponses({ states: services.states, rpId: services.passkeys.rpId, codeTtlSeconds: services.codeTtlSeconds });

  /**
   * The language of this page: the app's `ui_locales` (kept with the interaction), else the
   * browser's Accept-Language, else the default. Only ever a shipped locale.
   */
  const localeOf = (req: Request, interaction?: InteractionDetails): Locale =>
    chooseLocale({
      uiLocales: interaction?.params.ui_locales,
      acceptLanguage: req.headers['accept-language'],
      fallback: services.defaultLocale,
    });

  /** The interaction of this browser, or undefined (expired, other browser, wrong uid). */
  async function details(req: Request, res: Response): Promise<{ provider: Provider; interaction: InteractionDetails } | undefined> {
    const provider = await getProvider();
    setForwardedHeaders(req);
    try {
      const interaction = (await provider.interactionDetails(req, res)) as unknown as InteractionDetails;
      if (interaction.uid !== req.params.uid) return undefined;
      return { provider, interaction };
    } catch (err) {
      if ((err as { name?: string }).name === 'SessionNotFound') return undefined;
      throw err;
    }
  }

  /**
   * The app signed in to, undefined once it is deleted: its sign-ins end on the expired page,
   * as the provider would refuse to finish them anyway. The enterprise comes only from the app,
   * so no step of a sign-in ever looks up the users of another enterprise.
   */
  async function clientOf(
    provider: Provider,
    interaction: InteractionDetails,
  ): Promise<(SignInClient & { redirectTarget: string[]; firstParty: boolean; redirectUriRegistered: boolean }) | undefined> {
    const clientId = String(interaction.params.client_id);
    const client = await provider.Client.find(clientId);
    if (!client) return undefined;
    const redirectUri = typeof interaction.params.redirect_uri === 'string' ? interaction.params.redirect_uri : undefined;
    return {
      clientId,
      name: client.clientName ?? clientId,
      enterpriseId: enterpriseOfClient(client),
      redirectTarget: redirectUri ? [formActionSourceOf(redirectUri)] : [],
      firstParty: isFirstParty(client),
      // Read from the app as it is now: an admin may have removed the URI since the sign-in began.
      redirectUriRegistered: redirectUriStillRegistered(client, redirectUri),
    };
  }

  /** The consent the page (or a first-party app, without a page) gave; the expired page when the sign-in is gone. */
  async function finishConsent(
    req: Request,
    res: Response,
    locale: Locale,
    provider: Provider,
    interaction: InteractionDetails,
    clientId: string,
  ) {
    const grantId = await grantConsent(provider, interaction, clientId);
    if (!grantId) return pages.expiredPage(res, locale);
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /**
   * Unexpected failures (a store down, a login template an admin broke) end on an HTML page
   * with a reference that is also logged (api/errors/error-pipeline.ts), never on the API's JSON body.
   */
  const htmlErrors =
    (handler: (req: Request, res: Response) => Promise<unknown>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        await handler(req, res);
      } catch (err) {
        if (res.headersSent) throw err;
        const { status, headers, errorId } = errorPageOf(err, req, services.logger);
        pages.errorPage(res.set(headers), localeOf(req), errorId, status);
      }
    };

  router.get(
    path,
    htmlErrors(async (req, res) => {
      // Every load costs store reads (and the first a write) whatever the user: it counts
      // against the address's budget of sign-in pages, beside the reads rather than before them.
      const address = req.ip ?? 'unknown';
      const refusal = services.startLimits.refusal(address);
      if (refusal) return pages.tooManyPage(res, localeOf(req), refusal);
      const [found] = await Promise.all([details(req, res), services.startLimits.count(address)]);
      if (!found) return pages.expiredPage(res, localeOf(req));
      const { interaction, provider } = found;
      const locale = localeOf(req, interaction);
      const client = await clientOf(provider, interaction);
      if (!client) return pages.expiredPage(res, locale);
      const state = await services.states.open(interaction.uid, client.clientId, new Date(interaction.exp * 1000));
      if (interaction.prompt.name !== 'consent') return pages.loginPage(req, res, locale, state, client);
      // First-party apps never show the page, even when the request insists on consent
      // (prompt=consent, which OpenID Connect asks for with offline_access).
      if (client.firstParty) return finishConsent(req, res, locale, provider, interaction, client.clientId);
      const data = {
        locale,
        title: translate(locale, 'consent.title'),
        clientName: client.name,
        action: req.originalUrl.split('?')[0],
        csrf: state.csrf,
        userId: userOfAccountId(interaction.session?.accountId ?? '')?.userId ?? '',
        scopes: scopesAsked(interaction).map((name) => ({ name, label: scopeLabel(locale, name) })),
      };
      return pages.send(res, 200, 'consent', data, client.redirectTarget);
    }),
  );

  router.post(
    path,
    form,
    htmlErrors(async (req, res) => {
      const address = req.ip ?? 'unknown';
      // Counted before the sign-in is read: a post refused below (expired, stale token) costs
      // store reads too. The one round trip every step makes anyway, moved first.
      const admission = await steps.admit(address);
      // Every answer to a post reports the address's budget, the stale form's and the expired page's too.
      if (admission.budget) res.set(rateLimitHeaders([admission.budget]));
      const found = await details(req, res);
      if (!found)
        return admission.refusal ? pages.tooManyPage(res, localeOf(req), admission.refusal) : pages.expiredPage(res, localeOf(req));
      const { interaction, provider } = found;
      const locale = localeOf(req, interaction);
      const client = await clientOf(provider, interaction);
      if (!client) return pages.expiredPage(res, locale);
      const state = await services.states.find(interaction.uid);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!state || !sameToken(state.csrf, body.csrf))
        return admission.refusal ? pages.tooManyPage(res, locale, admission.refusal) : pages.staleFormPage(res, locale, client);
      const selfUrl = req.originalUrl.split('?')[0] ?? '';
      // The login code goes out in the language of the page that asked for it.
      const { next, afterAnswer } = await steps.post(state, { ...client, locale }, body, address, admission);
      // The code is sent once the answer has left, so its cost never shows in the answer; and
      // also when the browser hung up before it arrived (`finished` fires then too, even when the
      // connection was gone before this line): the step was taken, the page reloaded shows the
      // code form, so the code must come.
      if (afterAnswer) finished(res, () => services.afterAnswers.start(afterAnswer));
      switch (next.kind) {
        case 'login-page':
          return pages.loginPage(req, res, locale, next.state, client, next);
        case 'same-page':
          return res.redirect(303, selfUrl);
        case 'signed-in':
          // The session's account is the user with the enterprise of the app signed in to.
          return await provider.interactionFinished(
            req,
            res,
            { login: { accountId: accountIdOf({ enterpriseId: client.enterpriseId, userId: next.userId }) } },
            { mergeWithLastSubmission: false },
          );
        case 'stopped':
          return pages.stoppedPage(req, res, locale, next.reason, client, state);
        case 'consent':
          if (interaction.prompt.name !== 'consent') return res.redirect(303, selfUrl);
          if (!next.allow) {
            // The provider sends a refusal to the redirect URI the sign-in started with; one the
            // app no longer has gets the error page instead, as a code would (redirect-uri-still-registered.ts).
            if (!client.redirectUriRegistered) return pages.redirectUriNotRegisteredPage(res, locale);
            const denied = { error: 'access_denied', error_description: 'The user denied access' };
            return await provider.interactionFinished(req, res, denied, { mergeWithLastSubmission: false });
          }
          return await finishConsent(req, res, locale, provider, interaction, client.clientId);
      }
    }),
  );

  return router;
}
