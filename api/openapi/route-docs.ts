import { otpRouteDocs } from './otp.route-docs.js';
import type { RouteDoc } from './route-docs.types.js';
import { usersRouteDocs } from './users.route-docs.js';

export type { RouteDoc };

// The catalog of documented operations. Request bodies point at schemas/ by `$id`; a test
// fails when the app serves a route that is not listed here.


const errorResponses = {
  '400': { description: 'Malformed request', schema: 'common.error.json' },
  '401': { description: 'Missing or invalid credentials', schema: 'common.bearer-error.json' },
  '422': { description: 'Validation failed', schema: 'common.error.json' },
};

export const routeDocs: RouteDoc[] = [
  { method: 'get', path: '/healthz', summary: 'Liveness: the process answers', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'Alive' } } },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: MongoDB and Redis answer',
    tag: 'operations',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Ready', schema: 'common.readiness.json' }, '503': { description: 'A dependency is down', schema: 'common.readiness.json' } },
  },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'Metrics in Prometheus text format', contentType: 'text/plain' } } },
  { method: 'get', path: '/openapi.json', summary: 'This document', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'OpenAPI 3.1 document' } } },
  { method: 'get', path: '/docs', summary: 'Interactive API documentation', tag: 'operations', auth: { kind: 'none' }, responses: { '200': { description: 'HTML page', contentType: 'text/html' } } },
  { method: 'get', path: '/admin/templates', summary: 'List message templates', tag: 'admin', auth: { kind: 'admin' }, responses: { '200': { description: 'Every template, by name', schema: 'admin-templates.template.json' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' } } },
  {
    method: 'get',
    path: '/admin/templates/{name}',
    summary: 'Read one message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: { '200': { description: 'The template', schema: 'admin-templates.template.json' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' }, '404': { description: 'No such template', schema: 'common.error.json' } },
  },
  {
    method: 'post',
    path: '/admin/templates',
    summary: 'Create a message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-templates.create.json',
    responses: {
      '201': { description: 'Created', schema: 'admin-templates.template.json' },
      '400': errorResponses['400'],
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '409': { description: 'A template with this name exists', schema: 'common.error.json' },
      '422': { description: 'Invalid field, or HTML that does not compile', schema: 'common.error.json' },
    },
  },
  {
    method: 'put',
    path: '/admin/templates/{name}',
    summary: 'Replace the content of a message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-templates.update.json',
    responses: {
      '200': { description: 'Updated (version incremented)', schema: 'admin-templates.template.json' },
      '400': errorResponses['400'],
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '404': { description: 'No such template', schema: 'common.error.json' },
      '422': { description: 'Invalid field, or HTML that does not compile', schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/outbox',
    summary: 'Messages kept by the outbox provider (query: to, limit 1-100, default 20), newest first',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: { '200': { description: 'Array of messages', schema: 'admin-outbox.message.json' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' }, '422': { description: 'Invalid to or limit', schema: 'common.error.json' } },
  },
  {
    method: 'post',
    path: '/webhooks/twilio/status',
    summary: 'Twilio SMS status callback (signed with X-Twilio-Signature)',
    tag: 'webhooks',
    auth: { kind: 'none' },
    requestContentType: 'application/x-www-form-urlencoded',
    responses: { '204': { description: 'Accepted' }, '403': { description: 'Missing or invalid signature', schema: 'common.error.json' } },
  },
  {
    method: 'post',
    path: '/webhooks/sendgrid/events',
    summary: 'SendGrid signed Event Webhook (ECDSA, 5-minute timestamp window, de-duplicated by sg_event_id)',
    tag: 'webhooks',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Events processed; duplicates counted' }, '400': errorResponses['400'], '403': { description: 'Missing, invalid or stale signature', schema: 'common.error.json' } },
  },
  // Authorization server (oidc-provider, DECISIONS D23).
  { method: 'get', path: '/svc/authserver/.well-known/openid-configuration', summary: 'Authorization server metadata (discovery)', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'Metadata document' } } },
  { method: 'get', path: '/svc/authserver/jwks', summary: 'Public keys that verify access tokens', tag: 'authorization server', auth: { kind: 'none' }, responses: { '200': { description: 'JSON Web Key Set' } } },
  {
    method: 'post',
    path: '/svc/authserver/oauth/token',
    summary: 'Token endpoint: client_credentials with HTTP Basic client authentication (D4)',
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
    summary: 'Authorization endpoint (authorization code flow, spec 4.2)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '303': { description: 'Redirect to the login interaction or back to redirect_uri' }, '400': { description: 'Unknown client or redirect_uri (HTML page, D24)', contentType: 'text/html' } },
  },
  // Admin API (ADMIN_TOKEN).
  {
    method: 'post',
    path: '/admin/clients',
    summary: 'Register an OAuth client; the secret is shown once',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-clients.create.json',
    responses: {
      '201': { description: 'Created', schema: 'admin-clients.created.json' },
      '400': errorResponses['400'],
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '415': { description: 'Content type is not JSON', schema: 'common.error.json' },
      '422': errorResponses['422'],
      '503': { description: 'ADMIN_TOKEN is not set', schema: 'common.error.json' },
    },
  },
  { method: 'get', path: '/admin/clients', summary: 'List clients (no secrets)', tag: 'admin', auth: { kind: 'admin' }, responses: { '200': { description: 'Clients' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' } } },
  {
    method: 'get',
    path: '/admin/clients/{clientId}',
    summary: 'Read one client (no secret)',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: { '200': { description: 'The client', schema: 'admin-clients.client.json' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' }, '404': { description: 'No such client', schema: 'common.error.json' } },
  },
  {
    method: 'delete',
    path: '/admin/clients/{clientId}',
    summary: 'Delete a client: no new tokens, and its existing tokens are refused',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: { '204': { description: 'Deleted' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' }, '404': { description: 'No such client', schema: 'common.error.json' } },
  },
  {
    method: 'post',
    path: '/admin/groups',
    summary: 'Create a user group',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-groups.create.json',
    responses: {
      '201': { description: 'Created', schema: 'admin-groups.group.json' },
      '400': errorResponses['400'],
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '409': { description: 'The group exists', schema: 'common.error.json' },
      '415': { description: 'Content type is not JSON', schema: 'common.error.json' },
      '422': errorResponses['422'],
    },
  },
  { method: 'get', path: '/admin/groups', summary: 'List groups, by name', tag: 'admin', auth: { kind: 'admin' }, responses: { '200': { description: 'Groups' }, '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' } } },
  ...otpRouteDocs,
  ...usersRouteDocs,
];

/** Shared error responses, for route entries added by feature modules. */
export const commonErrors = errorResponses;
