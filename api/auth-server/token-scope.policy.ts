import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { CLIENT_SCOPES } from '../../core/clients/clients.repository.js';

const API_SCOPES = new Set<string>(CLIENT_SCOPES);

/**
 * For client_credentials: no `scope` means every scope registered for the client
 * (RFC 6749 3.3 default), and any scope the client lacks, known to us or not, is invalid_scope.
 * oidc-provider would instead issue a scope-less token and silently drop unknown scopes, so the
 * request's scope is settled here, from getResourceServerInfo, which the grant handler calls
 * before it reads the scope parameter.
 */
export function applyClientCredentialsScopePolicy(ctx: KoaContextWithOIDC, clientScopes: string[]): void {
  const params = ctx.oidc.params as { grant_type?: string; scope?: string } | undefined;
  if (!params || params.grant_type !== 'client_credentials') return;
  const granted = clientScopes.filter((scope) => API_SCOPES.has(scope));
  if (!params.scope) {
    params.scope = granted.join(' ') || undefined;
    return;
  }
  const allowed = new Set(granted);
  for (const scope of params.scope.split(' ').filter(Boolean)) {
    if (!allowed.has(scope)) throw new errors.InvalidScope('requested scope is not allowed', scope);
  }
}

export { API_SCOPES };
