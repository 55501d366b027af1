import type { RequestHandler, Response } from 'express';
import { decodeProtectedHeader } from 'jose';
import { createEnterpriseTokenVerifier, type EnterpriseTokenClaims } from '../../core/auth/enterprise-token.verifier.js';
import type { RevocationChecks } from '../../core/auth/revocation-checks.js';
import type { VerificationKeySet } from '../../core/auth/verification-key-set.js';
import { currentTokenScopes } from '../../core/auth/token-scopes.js';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import { VerifiedTokenCache } from '../../core/auth/verified-token.cache.js';
import { BearerError, insufficientScope } from '../errors/http-error.js';
import { tokenIdentity } from '../auth-server/auth-server.js';
import type { ServiceContext } from '../service-context.js';

/** Who called: set on `res.locals.auth` by requireBearer. */
export interface AuthInfo {
  clientId: string;
  /** The client's enterprise: every user the request touches is looked up there. */
  enterpriseId: string;
  scopes: string[];
  /** A test client (docs/operations.md, "Test mode"): its messages never reach a provider. */
  test: boolean;
  /** A test client's fixed codes by userId (none for other clients). */
  testCodes: ReadonlyMap<string, string>;
}

export function authOf(res: Response): AuthInfo {
  const auth = (res.locals as { auth?: AuthInfo }).auth;
  if (!auth) throw new Error('requireBearer must run before this handler');
  return auth;
}

/** What the bearer check reads, each built once by the composition root and shared with the authorization server. */
export interface BearerStores {
  clients: Pick<ClientLookup, 'client'>;
  /** The process's one verification key set, shared with introspection (and its reload budget with it). */
  verificationKeys: VerificationKeySet;
  revocations: Pick<RevocationChecks, 'isRevoked'>;
}

const BEARER_RE = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

const unauthorized = () => new BearerError(401, 'unauthorized', 'Full authentication is required to access this resource');
const invalidToken = (token: string) => new BearerError(401, 'invalid_token', `Invalid access token: ${token}`);

/**
 * Checks the access token locally (signature with the authorization server's key, issuer,
 * audience, expiry, type) and that it carries `scope`, which its client still has. Tokens of a deleted client are refused
 * (within the client cache window, core/clients/client-lookup.cache.ts), and so are tokens their
 * client revoked (within the revocation check window, core/auth/revocation-checks.ts).
 */
export function requireBearer(ctx: ServiceContext, stores: BearerStores, scope: string): RequestHandler {
  const { clients, verificationKeys, revocations } = stores;
  const verify = createEnterpriseTokenVerifier(verificationKeys, tokenIdentity(ctx.config.publicUrl));
  const verified = new VerifiedTokenCache();

  return async (req, res, next) => {
    const header = req.get('authorization');
    const match = header === undefined ? null : BEARER_RE.exec(header.trim());
    if (!match) throw unauthorized();
    const token = match[1];

    // A token verified before is taken from the cache while the key that signed it is still
    // valid: a key retired at once (a rotation after a leak) ends its cached tokens too.
    const keys = await verificationKeys(undefined);
    let claims = verified.get(token, Date.now() / 1000, (kid) => kid !== undefined && keys.kids.has(kid)) as
      EnterpriseTokenClaims | undefined;
    if (!claims) {
      claims = await verify(token);
      if (!claims) throw invalidToken(token);
      verified.set(token, claims, decodeProtectedHeader(token).kid);
    }
    if (await revocations.isRevoked(claims.jti)) throw invalidToken(token);
    const client = await clients.client(claims.client_id);
    if (!client) throw invalidToken(token);

    // A scope removed from the client since the token was issued no longer counts (within the
    // client cache window); one added comes with the client's next token.
    const scopes = currentTokenScopes(claims.scope, client.scopes);
    if (!scopes.includes(scope)) {
      throw insufficientScope(scope);
    }
    const auth: AuthInfo = {
      clientId: claims.client_id,
      enterpriseId: client.enterpriseId,
      scopes,
      test: client.test === true,
      testCodes: new Map(client.test === true ? (client.testCodes ?? []).map((c) => [c.userId, c.code] as const) : []),
    };
    res.locals.auth = auth;
    next();
  };
}
