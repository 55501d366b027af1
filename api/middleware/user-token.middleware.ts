import type { RequestHandler, Response } from 'express';
import { importJWK, jwtVerify, type CryptoKey, type JWTPayload, type KeyObject } from 'jose';
import { getSigningKey } from '../../core/auth/signing-key.service.js';
import { VerifiedTokenCache } from '../../core/auth/verified-token.cache.js';
import { lookupClient } from '../../core/clients/client-lookup.cache.js';
import { BearerError } from '../../core/errors/app-error.js';
import { enterpriseOfClient, findEnterpriseUser, isUserBlocked, type UserFinder } from '../../core/notifications/enterprise-scope.js';
import { tokenIdentity } from '../auth-server/auth-server.js';
import type { ServiceContext } from '../service-context.js';

/** The signed-in user of the client library: set on `res.locals.user` by requireUserToken. */
export interface UserAuth {
  userId: string;
  enterpriseId: string;
}

export function userAuthOf(res: Response): UserAuth {
  const user = (res.locals as { user?: UserAuth }).user;
  if (!user) throw new Error('requireUserToken must run before this handler');
  return user;
}

export const USER_TOKEN_SCOPE = 'notifications';

const BEARER_RE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
const unauthorized = () => new BearerError(401, 'unauthorized', 'Full authentication is required to access this resource');
const invalidToken = (token: string) => new BearerError(401, 'invalid_token', `Invalid access token: ${token}`);

/**
 * Accepts only a user's access token: the JWT access token (RFC 9068, `typ: at+jwt`) that the
 * authorization server issues for the authorization code flow, signed by the service key, whose
 * `sub` is the userId and differs from `client_id` (a client_credentials token has the client as
 * its subject and is refused here). It must carry scope `notifications`; the user must exist in
 * the enterprise of the app's client, be ACTIVE and not blocked (403 user_blocked).
 */
export function requireUserToken(ctx: ServiceContext, users: UserFinder): RequestHandler {
  const { issuer, audience } = tokenIdentity(ctx.config.publicUrl);
  let key: Promise<CryptoKey | KeyObject | Uint8Array> | undefined;
  const verificationKey = () => {
    key ??= getSigningKey(ctx.mongo, ctx.config).then((k) => importJWK(k.publicJwk, k.alg));
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
  const verified = new VerifiedTokenCache();

  return async (req, res, next) => {
    const header = req.get('authorization');
    const match = header === undefined ? null : BEARER_RE.exec(header.trim());
    if (!match) throw unauthorized();
    const token = match[1];

    let claims = verified.get(token) as (JWTPayload & { client_id?: unknown; scope?: unknown }) | undefined;
    if (!claims) {
      try {
        ({ payload: claims } = await jwtVerify(token, await verificationKey(), { issuer, audience, typ: 'at+jwt', algorithms: ['RS256'] }));
      } catch {
        throw invalidToken(token);
      }
      verified.set(token, claims);
    }
    if (typeof claims.client_id !== 'string' || typeof claims.sub !== 'string' || claims.sub === claims.client_id) throw invalidToken(token);
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    if (!scopes.includes(USER_TOKEN_SCOPE)) {
      throw new BearerError(403, 'insufficient_scope', `The access token does not grant the scope '${USER_TOKEN_SCOPE}'`);
    }
    const client = await lookupClient(ctx.mongo, claims.client_id);
    if (!client) throw invalidToken(token);
    const enterpriseId = enterpriseOfClient(client);
    const user = await findEnterpriseUser(users, enterpriseId, claims.sub);
    if (!user || user.status !== 'ACTIVE') throw invalidToken(token);
    if (isUserBlocked(user)) throw new BearerError(403, 'user_blocked', 'The user is blocked');
    const auth: UserAuth = { userId: user.userId, enterpriseId };
    res.locals.user = auth;
    next();
  };
}
