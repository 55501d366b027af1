import { commonErrors as errorResponses } from './common-responses.js';
import type { RouteDoc } from './route-docs.types.js';

// Admin API (ADMIN_TOKEN): clients and groups.
export const adminRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/admin/clients',
    summary: 'Register an OAuth client; the client secret and the notification callback secret are shown once',
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
    method: 'post',
    path: '/admin/clients/{clientId}/callback-secret',
    summary: 'Rotate the secret that signs notification callbacks; the new one is shown once and signs from now on',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '200': { description: 'The new secret', schema: 'admin-clients.callback-secret.json' },
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '404': { description: 'No such confidential client', schema: 'common.error.json' },
    },
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
];
