import { rateLimitHeaders } from '../../core/platform/throttling/rate-limit-headers.js';
import { USER_ID_RE } from '../../core/users/user-id.js';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import type Provider from 'oidc-provider';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { AppError } from '../../core/platform/errors/app-error.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import type { LoginLimits } from '../../core/sign-in/login-rate-limits.js';
import type { LoginState, LoginStatesRepository } from '../../core/sign-in/login-states.repository.js';
import type { LoginService } from '../../core/sign-in/login.service.js';
import type { PasskeyOutcome } from '../../core/passkeys/passkey-sign-in.service.js';
import { generateChallenge } from '../../core/passkeys/passkey-challenge.js';
import { parsePasskeyAnswer } from '../../core/passkeys/passkey-answer.js';
import { accountIdOf, userOfAccountId, type SignInClient } from '../../core/sign-in/sign-in-users.js';
import type { PasskeyAnswer } from '../../core/passkeys/passkey-answer.js';
import { AUTH_SERVER_PATH } from './auth-server.js';
import { enterpriseOfClient, isFirstParty } from './oidc-adapter.js';
import { renderPage, type PageData, type PageName } from './login-pages.js';

export interface InteractionServices {
  login: LoginService;
  states: LoginStatesRepository;
  limits: LoginLimits;
  logger: Logger;
  /** Sign-in with a passkey: the relying party id the page asks the browser for, and the check of its answer. */
  passkeys: {
    rpId: string;
    verify(client: SignInClient, answer: PasskeyAnswer, challenge: string, address: string): Promise<PasskeyOutcome>;
  };
}

const CODE_RE = /^[0-9]{6}$/;

const SCOPE_LABELS: Record<string, string> = {
  openid: 'Confirm who you are (your user id)',
  offline_access: 'Stay signed in to the app (refresh tokens)',
  notifications: 'Read and answer your notifications',
};

interface InteractionDetails {
  uid: string;
  exp: number;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, unknown>;
  session?: { accountId?: string };
  grantId?: string;
}

function sameToken(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The login interaction (user id → login code → back to the app, or a passkey instead) and the
 * consent page, as server-rendered forms that post back to their own URL. Every page carries its
 * own CSRF token and nothing loads from elsewhere; the one script, on the user-id page, asks the
 * browser for a passkey and posts its answer as a form.
 */
export function interactionRoutes(
  getProvider: () => Promise<Provider>,
  services: InteractionServices,
  setForwardedHeaders: (req: Request) => void,
): Router {
  const router = Router();
  const path = `${AUTH_SERVER_PATH}/interaction/:uid`;
  // Room for a passkey answer (up to 6000 characters, percent-encoded) besides the short fields.
  const form = express.urlencoded({ extended: false, limit: '80kb', parameterLimit: 20 });

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

  const expiredPage = (res: Response) =>
    send(res, 400, 'message', {
      title: 'This sign-in has expired',
      message: 'This sign-in page has expired or was opened in another browser. Go back to the app and sign in again.',
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

  async function clientOf(
    provider: Provider,
    interaction: InteractionDetails,
  ): Promise<SignInClient & { redirectOrigin: string[]; firstParty: boolean }> {
    const clientId = String(interaction.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirectUri = typeof interaction.params.redirect_uri === 'string' ? interaction.params.redirect_uri : undefined;
    return {
      clientId,
      name: client?.clientName ?? clientId,
      enterpriseId: client ? enterpriseOfClient(client) : DEFAULT_ENTERPRISE_ID,
      redirectOrigin: redirectUri ? [new URL(redirectUri).origin] : [],
      firstParty: client ? isFirstParty(client) : false,
    };
  }

  /** Grants what the consent prompt found missing; undefined when the sign-in is gone. */
  async function grantConsent(provider: Provider, interaction: InteractionDetails, clientId: string): Promise<string | undefined> {
    const accountId = interaction.session?.accountId;
    if (!accountId) return undefined;
    const grant = interaction.grantId ? await provider.Grant.find(interaction.grantId) : new provider.Grant({ accountId, clientId });
    if (!grant) return undefined;
    const details = interaction.prompt.details;
    const oidcScopes = (details.missingOIDCScope as string[] | undefined) ?? [];
    if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
    const claims = (details.missingOIDCClaims as string[] | undefined) ?? [];
    if (claims.length > 0) grant.addOIDCClaims(claims);
    for (const [indicator, scopes] of Object.entries((details.missingResourceScopes as Record<string, string[]> | undefined) ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    return grant.save();
  }

  function scopesAsked(interaction: InteractionDetails): { name: string; label: string }[] {
    const oidc = (interaction.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
    const resource = Object.values((interaction.prompt.details.missingResourceScopes as Record<string, string[]> | undefined) ?? {}).flat();
    return [...new Set([...oidc, ...resource])].map((name) => ({ name, label: SCOPE_LABELS[name] ?? name }));
  }

  async function showLogin(
    res: Response,
    req: Request,
    state: LoginState,
    client: { name: string; redirectOrigin: string[] },
    extra: Partial<PageData> = {},
    status = 200,
  ): Promise<void> {
    const action = req.originalUrl.split('?')[0] ?? '';
    if (state.userId === undefined) {
      // Each showing of the page has its own passkey challenge, good for one answer.
      const challenge = generateChallenge();
      const offered = await services.states.setPasskeyChallenge(state.uid, challenge);
      send(
        res,
        status,
        'login-user',
        {
          title: 'Sign in',
          clientName: client.name,
          action,
          csrf: state.csrf,
          // After an error the passkeys are offered by the button only, never straight away in the
          // field's suggestions: a browser that answers those by itself would go round in circles.
          ...(offered ? { passkey: { challenge, rpId: services.passkeys.rpId, conditional: extra.error === undefined } } : {}),
          ...extra,
        },
        client.redirectOrigin,
      );
    } else {
      send(
        res,
        status,
        'login-code',
        { title: 'Enter your code', clientName: client.name, action, csrf: state.csrf, userId: state.userId, ...extra },
        client.redirectOrigin,
      );
    }
  }

  /**
   * Sign-in locked after too many wrong codes in a row. User ids that do not exist lock the same
   * way, so this page tells a stranger only what their own failures did; it tells the person
   * what to do.
   */
  const signInLockedPage = (res: Response, client: { name: string; redirectOrigin: string[] }, selfUrl: string, state: LoginState) =>
    send(
      res,
      403,
      'message',
      {
        title: 'Sign-in is locked',
        clientName: client.name,
        message: 'Sign-in to this account is locked because of too many wrong codes in a row. Contact your administrator to unlock it.',
        action: selfUrl,
        csrf: state.csrf,
        restart: true,
      },
      client.redirectOrigin,
    );

  const notActivePage = (res: Response, client: { name: string; redirectOrigin: string[] }, selfUrl: string, state: LoginState) =>
    send(
      res,
      403,
      'message',
      {
        title: 'Activate your account first',
        clientName: client.name,
        message:
          'Your account is not active yet. Activate it with the activation code you received when you were enrolled, then sign in again.',
        action: selfUrl,
        csrf: state.csrf,
        restart: true,
      },
      client.redirectOrigin,
    );

  const refusedPage = (res: Response, client: { name: string; redirectOrigin: string[] }, selfUrl: string, state: LoginState) =>
    send(
      res,
      403,
      'message',
      {
        title: 'Sign-in refused',
        clientName: client.name,
        message: 'This account cannot sign in. Contact your administrator.',
        action: selfUrl,
        csrf: state.csrf,
        restart: true,
      },
      client.redirectOrigin,
    );

  /** The session's account is the user with the enterprise of the app signed in to. */
  const finishLogin = (req: Request, res: Response, provider: Provider, client: SignInClient, userId: string) =>
    provider.interactionFinished(
      req,
      res,
      { login: { accountId: accountIdOf({ enterpriseId: client.enterpriseId, userId }) } },
      { mergeWithLastSubmission: false },
    );

  /**
   * Unexpected failures (a store down, a login template an admin broke) end on an HTML page
   * with a reference that is also logged, never on the API's JSON error body.
   */
  const htmlErrors =
    (handler: (req: Request, res: Response) => Promise<unknown>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        await handler(req, res);
      } catch (err) {
        if (res.headersSent) throw err;
        const errorId = randomUUID();
        services.logger.error({ err, errorId }, 'sign-in page failed');
        const status = err instanceof AppError && err.status >= 500 ? err.status : 500;
        send(res, status, 'message', {
          title: 'Sign-in is unavailable',
          message: `Sign-in could not continue. Please try again in a moment. (reference ${errorId})`,
        });
      }
    };

  router.get(
    path,
    htmlErrors(async (req, res) => {
      const found = await details(req, res);
      if (!found) return expiredPage(res);
      const { interaction, provider } = found;
      const client = await clientOf(provider, interaction);
      const state = await services.states.open(interaction.uid, client.clientId, new Date(interaction.exp * 1000));
      if (interaction.prompt.name === 'consent') {
        // First-party apps never show the page, even when the request insists on consent
        // (prompt=consent, which OpenID Connect asks for with offline_access).
        if (client.firstParty) {
          const grantId = await grantConsent(provider, interaction, client.clientId);
          if (!grantId) return expiredPage(res);
          return await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
        }
        return send(
          res,
          200,
          'consent',
          {
            title: 'Allow access?',
            clientName: client.name,
            action: req.originalUrl.split('?')[0],
            csrf: state.csrf,
            userId: userOfAccountId(interaction.session?.accountId ?? '')?.userId ?? '',
            scopes: scopesAsked(interaction),
          },
          client.redirectOrigin,
        );
      }
      return showLogin(res, req, state, client);
    }),
  );

  router.post(
    path,
    form,
    htmlErrors(async (req, res) => {
      const found = await details(req, res);
      if (!found) return expiredPage(res);
      const { interaction, provider } = found;
      const client = await clientOf(provider, interaction);
      const state = await services.states.find(interaction.uid);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!state || !sameToken(state.csrf, body.csrf)) {
        return send(res, 403, 'message', {
          title: 'Please try again',
          clientName: client.name,
          message: 'This form could not be accepted (its security token is missing or out of date). Go back to the app and sign in again.',
        });
      }
      const selfUrl = req.originalUrl.split('?')[0] ?? '';
      try {
        const address = req.ip ?? 'unknown';
        res.set(rateLimitHeaders([await services.limits.consumeIp(address)]));
        switch (body.step) {
          case 'user': {
            const userId = typeof body.userId === 'string' ? body.userId.trim() : '';
            if (!USER_ID_RE.test(userId)) {
              return showLogin(res, req, state, client, { error: 'Enter your user id: 1 to 64 letters, digits or . _ @ -', userId }, 400);
            }
            const step = await services.login.start(state, client, userId, address);
            if (step.kind === 'sign-in-locked') return signInLockedPage(res, client, selfUrl, state);
            // The code is generated once the answer has left, so its cost never shows in the answer.
            res.once('finish', () => void step.afterAnswer());
            // Post/redirect/get: reloading the code page does not send another code.
            return res.redirect(303, selfUrl);
          }
          case 'code': {
            if (state.userId === undefined) return res.redirect(303, selfUrl);
            const code = typeof body.otp === 'string' ? body.otp.trim() : '';
            if (!CODE_RE.test(code)) return showLogin(res, req, state, client, { error: 'Enter the 6 digits of the code we sent.' }, 400);
            const outcome = await services.login.verify(state, client, code, address);
            switch (outcome.kind) {
              case 'signed-in':
                return await finishLogin(req, res, provider, client, outcome.userId);
              case 'wrong-code':
                return showLogin(
                  res,
                  req,
                  state,
                  client,
                  { error: `That code is not right. ${outcome.attemptsLeft} ${outcome.attemptsLeft === 1 ? 'attempt' : 'attempts'} left.` },
                  400,
                );
              case 'locked':
                return showLogin(res, req, state, client, { error: 'Too many wrong codes. Send a new code to try again.' }, 400);
              case 'expired':
                return showLogin(res, req, state, client, { error: 'This code has expired. Send a new code to try again.' }, 400);
              case 'sign-in-locked':
                return signInLockedPage(res, client, selfUrl, state);
              case 'not-active':
                return notActivePage(res, client, selfUrl, state);
              default:
                return refusedPage(res, client, selfUrl, state);
            }
          }
          case 'passkey': {
            // Taken before anything is checked: a challenge answers once, whatever the answer.
            const challenge = await services.states.takePasskeyChallenge(interaction.uid);
            const answer = parsePasskeyAnswer(body.credential);
            if (state.userId !== undefined) return res.redirect(303, selfUrl);
            if (!answer) return showLogin(res, req, state, client, { error: 'The passkey answer was incomplete. Please try again.' }, 400);
            if (challenge === undefined)
              return showLogin(res, req, state, client, { error: 'That passkey sign-in is out of date. Please try again.' }, 400);
            const outcome = await services.passkeys.verify(client, answer, challenge, address);
            switch (outcome.kind) {
              case 'signed-in':
                return await finishLogin(req, res, provider, client, outcome.userId);
              case 'unknown-passkey':
                return showLogin(
                  res,
                  req,
                  state,
                  client,
                  { error: 'This passkey is not registered for this app. Use another passkey, or continue with your user id.' },
                  400,
                );
              case 'not-verified':
                return showLogin(
                  res,
                  req,
                  state,
                  client,
                  { error: 'That passkey could not be verified. Try again, or continue with your user id.' },
                  400,
                );
              case 'not-active':
                return notActivePage(res, client, selfUrl, state);
              default:
                return refusedPage(res, client, selfUrl, state);
            }
          }
          case 'resend': {
            const step = await services.login.resend(state, client, address);
            if (step.kind === 'sign-in-locked') return signInLockedPage(res, client, selfUrl, state);
            res.once('finish', () => void step.afterAnswer());
            return showLogin(res, req, state, client, { notice: 'A new code is on its way. Codes sent earlier no longer work.' });
          }
          case 'restart':
            await services.states.clearUser(interaction.uid);
            return res.redirect(303, selfUrl);
          case 'consent': {
            if (interaction.prompt.name !== 'consent') return res.redirect(303, selfUrl);
            if (body.decision !== 'allow') {
              return await provider.interactionFinished(
                req,
                res,
                { error: 'access_denied', error_description: 'The user denied access' },
                { mergeWithLastSubmission: false },
              );
            }
            const grantId = await grantConsent(provider, interaction, client.clientId);
            if (!grantId) return expiredPage(res);
            return await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
          }
          default:
            return showLogin(res, req, state, client, { error: 'Something was missing from that form. Please try again.' }, 400);
        }
      } catch (err) {
        if (err instanceof AppError && err.status === 429) {
          res.set(err.headers);
          return showLogin(res, req, (await services.states.find(interaction.uid)) ?? state, client, { error: err.message }, 429);
        }
        throw err;
      }
    }),
  );

  return router;
}
