import type { RequestHandler, Response } from 'express';
import { importJWK, jwtVerify, type CryptoKey, type JWTPayload, type KeyObject } from 'jose';
import { getSigningKey } from '../../core/auth/signing-key.service.js';
import { lookupClient } from '../../core/clients/client-lookup.cache.js';
import { VerifiedTokenCache } from '../../core/auth/verified-token.cache.js';
import { BearerError, insufficientScope } from '../../core/errors/app-error.js';
import { tokenIdentity } from '../auth-server/auth-server.js';
import type { ServiceContext } from '../service-context.js';

/** Who called: set on `res.locals.auth` by requireBearer. */
export interface AuthInfo {
  clientId: string;
  /** The client's enterprise: every user the request touches is looked up there. */
  enterpriseId: string;
  scopes: string[];
}

export function authOf(res: Response): AuthInfo {
  const auth = (res.locals as { auth?: AuthInfo }).auth;
  if (!auth) throw new Error('requireBearer must run before this handler');
  return auth;
}

const BEARER_RE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

const unauthorized = () => new BearerError(401, 'unauthorized', 'Full authentication is required to access this resource');
const invalidToken = (token: string) => new BearerError(401, 'invalid_token', `Invalid access token: ${token}`);

/**
 * Checks the access token locally (signature with the authorization server's key, issuer,
 * audience, expiry, type) and that it carries `scope`. Tokens of a deleted client are refused
 * (within the client cache window, core/clients/client-lookup.cache.ts).
 */
export function requireBearer(ctx: ServiceContext, scope: string): RequestHandler {
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
        // `at+jwt` (RFC 9068) keeps other JWTs signed by the same key (OTP validation JWTs) out.
        ({ payload: claims } = await jwtVerify(token, await verificationKey(), { issuer, audience, typ: 'at+jwt', algorithms: ['RS256'] }));
      } catch {
        throw invalidToken(token);
      }
      verified.set(token, claims);
    }
    // Enterprise tokens come from client_credentials, where the subject is the client itself; a
    // user's token (authorization code flow) names the user and never reaches the enterprise API.
    if (typeof claims.client_id !== 'string' || claims.sub !== claims.client_id) throw invalidToken(token);
    const client = await lookupClient(ctx.mongo, claims.client_id);
    if (!client) throw invalidToken(token);

    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    if (!scopes.includes(scope)) {
      throw insufficientScope(scope);
    }
    const auth: AuthInfo = { clientId: claims.client_id, enterpriseId: client.enterpriseId, scopes };
    res.locals.auth = auth;
    next();
  };
}
