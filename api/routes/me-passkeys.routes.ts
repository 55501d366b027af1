import { Router, type RequestHandler } from 'express';
import type { ActivityRepository } from '../../core/activity/activity.repository.js';
import type { DeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createPasskeyChangeNotice } from '../../core/passkeys/passkey-change-notice.js';
import { createPasskeyRegistration, type PasskeyRegistration } from '../../core/passkeys/passkey-registration.service.js';
import { removePasskey } from '../../core/passkeys/passkey-removal.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import type { PasskeysRepository } from '../../core/passkeys/passkeys.repository.js';
import { createRegistrationChallenges } from '../../core/passkeys/registration-challenges.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { BearerError, recentSignInRequired } from '../errors/http-error.js';
import { requireUserToken, userAuthOf, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { toPasskeyResponse } from './passkey-response.js';

/**
 * A passkey signs its user in to every app of the enterprise, for as long as it exists: only the
 * enterprise's own apps may manage passkeys, never a third-party app the user merely allowed to
 * read and answer notifications (its token carries the same scope).
 */
const ownAppsOnly: RequestHandler = (_req, res, next) => {
  if (!userAuthOf(res).firstParty) {
    throw new BearerError(403, 'insufficient_scope', "Passkeys are managed from the enterprise's own apps only");
  }
  next();
};

/**
 * Adding or removing a passkey needs a recent sign-in (OWASP: re-authenticate before changing how
 * one signs in), so a token taken from a page long after its sign-in can neither add a passkey of
 * its own nor remove the user's; the app signs the user in again with the `max_age` of the answer
 * (RFC 9470). Adding is checked when the options are issued: their challenge is good once, for
 * this user through this app, so the answer to it needs no second check (which would refuse a
 * passkey the authenticator has already made, for a person slow at its prompt). Listing needs no
 * more than the token.
 */
function recentSignInOnly(maxAgeSeconds: number, refusal: string): RequestHandler {
  return (_req, res, next) => {
    const { signedInAt } = userAuthOf(res);
    if (signedInAt === undefined || Date.now() / 1000 - signedInAt > maxAgeSeconds) {
      throw recentSignInRequired(maxAgeSeconds, refusal);
    }
    next();
  };
}

/**
 * The signed-in user's passkeys (user tokens only): registration in two steps (options with a
 * challenge, then the authenticator's answer), the list, and removal. A blocked user's token is
 * refused before any of this (403 user_blocked).
 */
export function mePasskeysRoutes(
  ctx: ServiceContext,
  {
    users,
    passkeys,
    activity,
    deliveries,
  }: {
    users: UsersRepository;
    passkeys: PasskeysRepository;
    activity: ActivityRepository;
    deliveries: Pick<DeliveriesRepository, 'insertMany'>;
  },
  userTokens: UserTokenStores,
): Router {
  const router = Router();
  const userToken = [requireUserToken(userTokens, 'notifications'), ownAppsOnly] as const;
  const { passkeyRegistrationMaxAuthAgeSeconds, passkeyRemovalMaxAuthAgeSeconds } = ctx.config.login;
  const recentSignInToAdd = recentSignInOnly(
    passkeyRegistrationMaxAuthAgeSeconds,
    'Adding a passkey needs a recent sign-in: sign in again',
  );
  const recentSignInToRemove = recentSignInOnly(
    passkeyRemovalMaxAuthAgeSeconds,
    'Removing a passkey needs a recent sign-in: sign in again',
  );
  const changeNotice = createPasskeyChangeNotice({ deliveries, enqueueDispatch: (id) => ctx.dispatch.enqueue(id), logger: ctx.logger });
  const owedStores = { users, activity, logger: ctx.logger };
  const registration = createPasskeyRegistration({
    ...owedStores,
    passkeys,
    challenges: createRegistrationChallenges(ctx.redis, ctx.config.queuePrefix),
    changeNotice,
    config: ctx.config.passkeys,
  });

  router.post('/v1/me/passkeys/registration-options', ...userToken, recentSignInToAdd, async (_req, res) => {
    const { user, clientId } = userAuthOf(res);
    res.set('Cache-Control', 'no-store').json(await registration.options(user, clientId));
  });

  router.post('/v1/me/passkeys', ...userToken, ...jsonBody(ctx), validateBody('passkeys.register.json'), async (req, res) => {
    const { user, clientId } = userAuthOf(res);
    const passkey = await registration.register(user, clientId, req.body as PasskeyRegistration);
    res.status(201).json(toPasskeyResponse(passkey));
  });

  router.get('/v1/me/passkeys', ...userToken, async (_req, res) => {
    res.json((await passkeys.list(userAuthOf(res).user)).map(toPasskeyResponse));
  });

  router.delete('/v1/me/passkeys/:passkeyId', ...userToken, recentSignInToRemove, async (req, res) => {
    await removePasskey({ ...owedStores, passkeys, changeNotice }, userAuthOf(res).user, String(req.params.passkeyId), { type: 'user' });
    res.status(204).end();
  });

  return router;
}
