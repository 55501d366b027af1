import type Provider from 'oidc-provider';

/** The provider's description of a grant type the client is not registered for. */
export const GRANT_TYPE_NOT_ALLOWED = 'requested grant type is not allowed for this client';

/**
 * oidc-provider refuses a grant type the client is not registered for (a public client asking
 * for client_credentials) as `invalid_request`, the code for a malformed request. RFC 6749 5.2 has
 * a code for this case, `unauthorized_client` ("not authorized to use this authorization grant
 * type"), which OAuth libraries and integrators tell apart from a request to fix; the answer keeps
 * the provider's status (400) and description.
 */
export function answerGrantTypeRefusalsAsUnauthorizedClient(provider: Provider): void {
  provider.use(async (oidcCtx, next) => {
    await next();
    const body = oidcCtx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (oidcCtx.status === 400 && body?.error === 'invalid_request' && body.error_description === GRANT_TYPE_NOT_ALLOWED)
      oidcCtx.body = { ...body, error: 'unauthorized_client' };
  });
}
