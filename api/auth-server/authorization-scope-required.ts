import { errors, interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { USER_ACCESS_TOKEN_SCOPES } from './user-token-scopes.js';

/**
 * An authorization request must ask for a scope a sign-in can grant (`scope` is a required
 * parameter of the authorization endpoint). The provider alone lets a request without one, or
 * with only scopes it does not know (it drops those), go on to the login page: the person is sent
 * a code and signs in, and the app then gets a bare `access_denied`. Refused here instead, before any page, back to the app with
 * its state (RFC 6749 4.1.2.1).
 *
 * A check of the login prompt runs once the client, redirect URI, response type and the scopes
 * the client may not ask have been checked, so the error goes to the redirect URI; it throws
 * rather than asking for a prompt, because no page could fix the request.
 */
export function scopeRequiredCheck(): interactionPolicy.Check {
  const grantable = new Set<string>(USER_ACCESS_TOKEN_SCOPES);
  return new interactionPolicy.Check('scope_required', 'a scope is required', (oidcCtx: KoaContextWithOIDC) => {
    const requested = String(oidcCtx.oidc.params?.scope ?? '')
      .split(' ')
      .filter((scope) => scope !== '');
    if (requested.length === 0) throw new errors.InvalidRequest("missing required parameter 'scope'");
    if (!requested.some((scope) => grantable.has(scope)))
      throw new errors.InvalidScope('requested scope is not supported', requested.join(' '));
    return interactionPolicy.Check.NO_NEED_TO_PROMPT;
  });
}
