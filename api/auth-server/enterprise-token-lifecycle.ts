import type Provider from 'oidc-provider';
import type { EnterpriseTokenClaims } from '../../core/auth/enterprise-token.verifier.js';
import type { RevocationChecks } from '../../core/auth/revocation-checks.js';
import type { RevokedTokensRepository } from '../../core/auth/revoked-tokens.repository.js';
import { currentTokenScopes } from '../../core/auth/token-scopes.js';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { STORE_RETRY_AFTER_SECONDS } from '../errors/error-pipeline.js';
import { apiScopesOf } from './oidc-adapter.js';

export interface EnterpriseTokenLifecycle {
  verify: (token: string) => Promise<EnterpriseTokenClaims | undefined>;
  revoked: Pick<RevokedTokensRepository, 'revoke'>;
  checks: RevocationChecks;
}

interface OAuthErrorBody {
  error?: unknown;
}

/**
 * Introspection (RFC 7662) and revocation (RFC 7009) of enterprise access tokens. They are JWTs,
 * which oidc-provider never stores and so answers `unsupported_token_type` for, after it has
 * authenticated the client. That answer is replaced here, for the authenticated client: its own
 * token is described or revoked; any other token is inactive (introspection) or refused
 * (revocation), as for the provider's own tokens. A revoked token is recorded by `jti` until it
 * would have expired, and every API process refuses it (api/middleware/bearer-auth.middleware.ts).
 */
export function answerForEnterpriseTokens(provider: Provider, lifecycle: EnterpriseTokenLifecycle): void {
  provider.use(async (oidcCtx, next) => {
    await next();
    const route = oidcCtx.oidc?.route;
    if (route !== 'introspection' && route !== 'revocation') return;
    if (oidcCtx.status !== 400 || (oidcCtx.body as OAuthErrorBody | undefined)?.error !== 'unsupported_token_type') return;
    const client = oidcCtx.oidc.client;
    const token = (oidcCtx.oidc.params as { token?: unknown } | undefined)?.token;
    if (!client || typeof token !== 'string') return;

    const verified = await lifecycle.verify(token).then(
      (claims) => ({ claims }),
      (err: unknown) => {
        if (isStoreUnavailable(err)) return undefined;
        throw err;
      },
    );
    if (!verified) {
      // The keys could not be read (the store is down): the token may be valid, so neither
      // `active: false` nor a refusal, but "try again" in the shape of RFC 6749 5.2.
      oidcCtx.status = 503;
      oidcCtx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
      oidcCtx.body = { error: 'temporarily_unavailable', error_description: 'the signing keys cannot be read now; retry later' };
      return;
    }
    const { claims } = verified;
    const own = claims !== undefined && claims.client_id === client.clientId;
    if (route === 'introspection') {
      // Introspection is for confidential clients, as for the provider's tokens.
      const active = own && client.clientAuthMethod !== 'none' && !(await lifecycle.checks.isRevoked(claims.jti));
      // The scopes the API honours now, not those signed in: one removed from the client since is gone.
      const scope = active ? currentTokenScopes(claims.scope, apiScopesOf(client)).join(' ') : '';
      oidcCtx.status = 200;
      oidcCtx.body = active
        ? {
            active: true,
            client_id: claims.client_id,
            ...(scope ? { scope } : {}),
            exp: claims.exp,
            iat: claims.iat,
            iss: claims.iss,
            aud: claims.aud,
            sub: claims.sub,
            jti: claims.jti,
            token_type: 'Bearer',
          }
        : { active: false };
      return;
    }
    // Revocation: an invalid or expired token needs nothing (RFC 7009 section 2.2).
    if (claims && !own) {
      oidcCtx.status = 400;
      oidcCtx.body = { error: 'invalid_request', error_description: 'client is not authorized to revoke the presented token' };
      return;
    }
    if (claims) {
      await lifecycle.revoked.revoke({ jti: claims.jti, clientId: claims.client_id, expiresAt: new Date(claims.exp * 1000) }, new Date());
      lifecycle.checks.markRevoked(claims.jti);
    }
    oidcCtx.status = 200;
    oidcCtx.body = '';
  });
}
