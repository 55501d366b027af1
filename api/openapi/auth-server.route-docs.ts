import type { RouteDoc } from './route-docs.types.js';

// Authorization server (oidc-provider), mounted at /svc/authserver.
export const authServerRouteDocs: RouteDoc[] = [
  { method: 'get', path: '/.well-known/oauth-authorization-server/svc/authserver', summary: 'Authorization server metadata (RFC 8414, section 3 location)', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'Metadata document' } } },
  { method: 'get', path: '/svc/authserver/.well-known/oauth-authorization-server', summary: 'Authorization server metadata (RFC 8414, issuer-relative location)', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'Metadata document' } } },
  { method: 'get', path: '/svc/authserver/.well-known/openid-configuration', summary: 'Authorization server metadata (discovery)', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'Metadata document' } } },
  { method: 'get', path: '/svc/authserver/jwks', summary: 'Public keys that verify access tokens', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'JSON Web Key Set' } } },
  {
    method: 'post',
    path: '/svc/authserver/oauth/token',
    summary: 'Token endpoint: client_credentials with HTTP Basic client authentication; no `scope` means every scope of the client',
    tag: 'authorization server',
    auth: { kind: 'none' },
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'Access token (JWT, RFC 9068)' },
      '400': { description: 'invalid_request, invalid_scope, invalid_target, unsupported_grant_type (RFC 6749 5.2)' },
      '401': { description: 'invalid_client' },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/oauth/authorize',
    summary: 'Authorization endpoint (authorization code flow)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '303': { description: 'Redirect to the login interaction or back to redirect_uri' }, '400': { description: 'Unknown client or a redirect_uri not registered exactly (HTML page, never a redirect)', contentType: 'text/html' } },
  },
];
