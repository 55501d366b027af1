import type Provider from 'oidc-provider';

/** What oidc-provider says when a request to an endpoint that authenticates clients carries no client at all. */
const NO_CLIENT_AUTHENTICATION = 'no client authentication mechanism provided';

/**
 * oidc-provider answers a request with no client authentication (no Authorization header, no
 * client_id) 400 `invalid_request`; RFC 6749 section 5.2 names this case `invalid_client`, as
 * every other failed client authentication here is: 401, with the Basic challenge HTTP requires
 * of a 401 (RFC 9110 15.5.2), naming the scheme the client should use.
 */
export function answerMissingClientAuthentication(provider: Provider): void {
  provider.use(async (oidcCtx, next) => {
    await next();
    const body = oidcCtx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (oidcCtx.status !== 400 || body?.error !== 'invalid_request' || body.error_description !== NO_CLIENT_AUTHENTICATION) return;
    oidcCtx.status = 401;
    oidcCtx.set('WWW-Authenticate', `Basic realm="${provider.issuer}"`);
    oidcCtx.body = { error: 'invalid_client', error_description: 'client authentication failed' };
  });
}
