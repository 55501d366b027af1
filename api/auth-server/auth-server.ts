import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { getSigningKey, loadCookieKeys, SIGNING_ALG } from '../../core/auth/signing-key.service.js';
import { verifyClientSecret } from '../../core/clients/client-secret.js';
import { CLIENT_SCOPES } from '../../core/clients/clients.repository.js';
import type { ServiceContext } from '../service-context.js';
import { createOidcAdapter } from './oidc-adapter.js';
import { applyClientCredentialsScopePolicy } from './token-scope.policy.js';

export const AUTH_SERVER_PATH = '/svc/authserver';

/** Issuer and audience of our access tokens; the bearer middleware checks both. */
export function tokenIdentity(publicUrl: string): { issuer: string; audience: string } {
  return { issuer: `${publicUrl}${AUTH_SERVER_PATH}`, audience: `${publicUrl}/v1` };
}

/** Builds the oidc-provider instance: clients and grants in MongoDB, JWT access tokens. */
export async function createAuthServer(ctx: ServiceContext): Promise<Provider> {
  const { config, mongo, logger } = ctx;
  const [signingKey, cookieKeys] = await Promise.all([getSigningKey(mongo, config), loadCookieKeys(mongo)]);
  const { issuer, audience } = tokenIdentity(config.publicUrl);

  const configuration: Configuration = {
    adapter: createOidcAdapter(mongo),
    jwks: { keys: [signingKey.privateJwk] },
    cookies: { keys: cookieKeys },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      jwks: '/jwks',
    },
    scopes: ['openid', ...CLIENT_SCOPES],
    responseTypes: ['code'],
    // HTTP Basic, and the secret in the form body since common OAuth libraries default to it;
    // `none` for public clients (authorization code + PKCE). A client registered for either
    // secret method may use both. No method that uses the secret as an HMAC key: we only hold its hash.
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALG], userinfoSigningAlgValues: [SIGNING_ALG] },
    clientDefaults: {
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: SIGNING_ALG,
    },
    ttl: {
      ClientCredentials: config.accessTokenTtlSeconds,
      AccessToken: config.accessTokenTtlSeconds,
      // DECISIONS D25: codes live at most 60 seconds.
      AuthorizationCode: 60,
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (oidcCtx: KoaContextWithOIDC, resource: string, client) => {
          const scopes = (client.scope ?? '').split(' ').filter(Boolean);
          if (resource !== audience) throw new errors.InvalidTarget();
          applyClientCredentialsScopePolicy(oidcCtx, scopes);
          return {
            scope: scopes.join(' '),
            audience,
            accessTokenTTL: config.accessTokenTtlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: SIGNING_ALG } },
          };
        },
      },
    },
    // The login interaction (user id + OTP, DECISIONS D25) is a later issue; it will serve this URL.
    interactions: { url: (_ctx, interaction) => `${AUTH_SERVER_PATH}/interaction/${interaction.uid}` },
    findAccount: async () => undefined,
    renderError: (oidcCtx, out) => {
      oidcCtx.type = 'html';
      oidcCtx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><h1>${escapeHtml(String(out.error))}</h1><p>${escapeHtml(String(out.error_description ?? ''))}</p></body></html>`;
    },
  };

  const provider = new Provider(issuer, configuration);
  // Endpoint URLs in discovery are built from X-Forwarded-Host/-Proto, which the routes set from
  // PUBLIC_URL on every request (api/auth-server/auth-server.routes.ts), never from the caller.
  provider.proxy = true;
  // Koa would print every unexpected error to stderr; ours go through the JSON logger instead.
  provider.silent = true;
  provider.on('server_error', (_oidcCtx: unknown, err: Error) => logger.error({ err }, 'authorization server error'));

  // The stored `client_secret` is an HMAC (core/clients/client-secret.ts), so the comparison
  // oidc-provider would make against the clear secret is swapped for ours, on this instance's
  // Client class only.
  const ClientClass = provider.Client as unknown as { prototype: { clientSecret?: string; compareClientSecret: (actual: string) => boolean } };
  ClientClass.prototype.compareClientSecret = function compareHashedSecret(this: { clientSecret?: string }, actual: string): boolean {
    return typeof this.clientSecret === 'string' && verifyClientSecret(this.clientSecret, actual);
  };
  return provider;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
