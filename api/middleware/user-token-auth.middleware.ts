import type { RequestHandler, Response } from 'express';
import type { OidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import type { SessionBoundToken, TokenSessionChecks } from '../../core/auth/token-session-checks.js';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import { signInTimeOf } from '../auth-server/user-token-sign-in-time.js';
import { BearerError, insufficientScope } from '../errors/http-error.js';
import { findUserForSignIn, userOfAccountId } from '../../core/sign-in/sign-in-users.js';
import { canSignIn } from '../../core/users/user-reachability.js';
import type { User } from '../../core/users/user.types.js';
import type { UsersRepository } from '../../core/users/users.repository.js';

/** The signed-in user behind a user token: set on `res.locals.user` by requireUserToken. */
export interface UserAuthInfo {
  user: User;
  clientId: string;
  /** Whether the token's app is the enterprise's own (no consent page), not a third party's. */
  firstParty: boolean;
  scopes: string[];
  /** When the user signed in for this token (epoch seconds); absent on tokens made without it. */
  signedInAt?: number;
}

export function userAuthOf(res: Response): UserAuthInfo {
  const auth = (res.locals as { user?: UserAuthInfo }).user;
  if (!auth) throw new Error('requireUserToken must run before this handler');
  return auth;
}

/** What a user token is checked against, built once by the composition root. */
export interface UserTokenStores {
  /** The authorization server's store, where opaque user tokens live. */
  oidcRecords: Pick<OidcRecordsRepository, 'findAccessTokenRecord'>;
  clients: Pick<ClientLookup, 'client'>;
  users: Pick<UsersRepository, 'findUser'>;
  /** Whether the browser session a token issued without offline_access is bound to still holds it. */
  sessions: Pick<TokenSessionChecks, 'holdsToken'>;
}

const BEARER_RE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

/** Code the client library maps a blocked user to (client library code 141). */
export const USER_BLOCKED_CODE = 141;

/** The refusal of a blocked user's token; also of a user blocked while their request was under way. */
export const userBlockedRefusal = () => new BearerError(403, 'user_blocked', 'User is blocked', { code: USER_BLOCKED_CODE });

/**
 * Accepts only a user's access token (authorization code flow), on /v1/me routes. User tokens
 * are opaque and looked up in the authorization server's store on every use, so a revoked
 * grant ends them at once; enterprise tokens (client_credentials JWTs) are never in that store
 * and are refused like any unknown token. A token issued without offline_access ends with the
 * browser session it was issued in, as the authorization server's introspection says. The user
 * must still be allowed to sign in: a blocked user gets 403 `user_blocked`.
 */
export function requireUserToken(stores: UserTokenStores, scope: string): RequestHandler {
  return async (req, res, next) => {
    res.locals.user = await authenticateUserToken(stores, req.get('authorization'), scope);
    next();
  };
}

/**
 * The checks of requireUserToken on an `Authorization` header; throws the refusal. Also run again
 * by long-lived answers (the notification stream), so a token revoked, its session ended or a user
 * blocked meanwhile ends them.
 */
export async function authenticateUserToken(stores: UserTokenStores, header: string | undefined, scope: string): Promise<UserAuthInfo> {
  const match = header === undefined ? null : BEARER_RE.exec(header.trim());
  if (!match) throw new BearerError(401, 'unauthorized', 'Full authentication is required to access this resource');
  const token = match[1] as string;
  const invalid = () => new BearerError(401, 'invalid_token', `Invalid access token: ${token}`);

  // Opaque token values are short and never contain dots; a JWT is not looked up at all.
  if (token.includes('.') || token.length > 128) throw invalid();
  const found = await stores.oidcRecords.findAccessTokenRecord(token);
  const record = found?.payload as
    (SessionBoundToken & { accountId?: unknown; clientId?: unknown; scope?: unknown; exp?: unknown; extra?: unknown }) | undefined;
  if (!record || typeof record.accountId !== 'string' || typeof record.clientId !== 'string') throw invalid();
  if (typeof record.exp === 'number' && record.exp * 1000 <= Date.now()) throw invalid();
  const client = await stores.clients.client(record.clientId);
  if (!client) throw invalid();
  // The token's account is (enterprise, user); it is only ever good within its client's enterprise.
  const account = userOfAccountId(record.accountId);
  if (!account || account.enterpriseId !== client.enterpriseId) throw invalid();
  // The session is asked alongside the user (a map look-up for a session seen within the recheck
  // window, one indexed read otherwise), so it adds no round trip to the request.
  const [user, sessionHoldsToken] = await Promise.all([
    findUserForSignIn(stores.users, client, account.userId),
    stores.sessions.holdsToken(record),
  ]);
  if (user?.blocked) throw userBlockedRefusal();
  // Ended by a block: unblocking restores nothing, the user signs in again.
  if (!user || !canSignIn(user) || found?.ended) throw invalid();
  // Ended with its browser session (no offline_access), as the provider's introspection says.
  if (!sessionHoldsToken) throw invalid();

  const scopes = typeof record.scope === 'string' ? record.scope.split(' ').filter(Boolean) : [];
  if (!scopes.includes(scope)) throw insufficientScope(scope);
  const signedInAt = signInTimeOf(record);
  return { user, clientId: client.clientId, firstParty: client.firstParty, scopes, ...(signedInAt === undefined ? {} : { signedInAt }) };
}
