import { ADMIN_LIST_PAGE_MAX } from '../../core/platform/list-page.js';
import { adminTokenErrors, commonErrors as errorResponses, notJsonError } from './common-responses.js';
import {
  IDEMPOTENCY_KEY_409,
  IDEMPOTENCY_KEY_422,
  IDEMPOTENCY_KEY_SECRET_409,
  idempotencyKeyHeader,
  idempotencyKeyInUseHeaders,
  idempotentReplayedHeader,
} from './idempotency-key-docs.js';
import type { RouteDoc } from './route-docs.types.js';

// Admin API (ADMIN_TOKEN): clients, groups and the activity record.

/** `limit` and `cursor` of the admin lists answered as arrays (clients, groups). */
function adminListPageQuery(entries: string): NonNullable<RouteDoc['query']> {
  return [
    {
      name: 'limit',
      description: `${entries} per page, 1 to ${ADMIN_LIST_PAGE_MAX} (default ${ADMIN_LIST_PAGE_MAX})`,
      schema: { type: 'integer', minimum: 1, maximum: ADMIN_LIST_PAGE_MAX },
    },
    {
      name: 'cursor',
      description: 'Where the page starts: the `cursor` of the previous answer\'s `Link: <...>; rel="next"` header',
      schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,1400}$' },
    },
  ];
}

/** A group is named by its name and owner: the owner in the query, none for a shared group. */
const groupOwner = {
  name: 'enterpriseId',
  description:
    "The enterprise whose own group is meant; absent, the shared group (the list: that enterprise's own groups, absent: every group)",
  schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
};
const invalidGroupOwner = { description: '`[Invalid field enterpriseId]` for the query', schema: 'common.error.json' };

const nextPageLinkHeader = {
  Link: {
    description: 'When more entries follow: `<path?limit=&cursor=>; rel="next"` (RFC 8288), the next page; absent on the last page',
    schema: { type: 'string' },
  },
};
export const adminRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/admin/clients',
    summary: 'Register an OAuth client; the client secret and the notification callback secret are shown once',
    tag: 'admin',
    auth: { kind: 'admin' },
    headers: [idempotencyKeyHeader({ secret: true })],
    requestSchema: 'admin-clients.create.json',
    responses: {
      '201': {
        description: 'Created',
        schema: 'admin-clients.created.json',
        headers: idempotentReplayedHeader,
        links: {
          read: { method: 'get', path: '/admin/clients/{clientId}', parameters: { clientId: '$response.body#/client_id' } },
          delete: { method: 'delete', path: '/admin/clients/{clientId}', parameters: { clientId: '$response.body#/client_id' } },
        },
      },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '409': { description: IDEMPOTENCY_KEY_SECRET_409, schema: 'common.error.json', headers: idempotencyKeyInUseHeaders },
      '415': notJsonError,
      '422': { description: `Validation failed; ${IDEMPOTENCY_KEY_422}`, schema: 'common.error.json' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'get',
    path: '/admin/clients',
    summary: 'List clients (no secrets), oldest first, a page at a time',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: adminListPageQuery('Clients'),
    responses: {
      '200': { description: 'A page of clients', schema: 'admin-clients.client.json', array: true, headers: nextPageLinkHeader },
      '401': adminTokenErrors['401'],
      '422': { description: 'Invalid limit or cursor', schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/clients/{clientId}',
    summary: 'Read one client (no secret)',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '200': { description: 'The client', schema: 'admin-clients.client.json' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such client', schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/admin/clients/{clientId}/secret',
    summary:
      'Rotate the client secret: the new one is shown once; the replaced one keeps working until previousSecretExpiresAt (CLIENT_SECRET_GRACE_SECONDS), and a secret replaced earlier stops at once',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    headers: [idempotencyKeyHeader({ secret: true })],
    responses: {
      '200': { description: 'The new secret', schema: 'admin-clients.secret.json', headers: idempotentReplayedHeader },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such confidential client', schema: 'common.error.json' },
      '409': {
        description: `Another rotation of the same client won at the same moment (rotate again); ${IDEMPOTENCY_KEY_SECRET_409}`,
        schema: 'common.error.json',
        headers: idempotencyKeyInUseHeaders,
      },
      '422': { description: IDEMPOTENCY_KEY_422, schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/admin/clients/{clientId}/callback-secret',
    summary: 'Rotate the secret that signs notification callbacks; the new one is shown once and signs from now on',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    headers: [idempotencyKeyHeader({ secret: true })],
    responses: {
      '200': { description: 'The new secret', schema: 'admin-clients.callback-secret.json', headers: idempotentReplayedHeader },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such confidential client', schema: 'common.error.json' },
      '409': { description: IDEMPOTENCY_KEY_SECRET_409, schema: 'common.error.json', headers: idempotencyKeyInUseHeaders },
      '422': { description: IDEMPOTENCY_KEY_422, schema: 'common.error.json' },
    },
  },
  {
    method: 'patch',
    path: '/admin/clients/{clientId}',
    summary:
      "Replace a client's name, scopes, IP allow-list, redirect URIs, web origins and/or test flag (the fields given), checked as at registration; a removed scope is refused on existing tokens, an added one comes with the next token",
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-clients.update.json',
    responses: {
      '200': { description: 'The updated client', schema: 'admin-clients.client.json' },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '404': { description: 'No such client', schema: 'common.error.json' },
      '415': notJsonError,
      '422': errorResponses['422'],
    },
  },
  {
    method: 'delete',
    path: '/admin/clients/{clientId}',
    summary: 'Delete a client: no new tokens, and its existing tokens are refused',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    responses: {
      '204': { description: 'Deleted' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such client', schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/admin/groups',
    summary: 'Create a user group',
    tag: 'admin',
    auth: { kind: 'admin' },
    headers: [idempotencyKeyHeader()],
    requestSchema: 'admin-groups.create.json',
    responses: {
      '201': {
        description: "Created (`Location: /admin/groups/<name>`, with `?enterpriseId=` for an enterprise's own)",
        schema: 'admin-groups.group.json',
        headers: idempotentReplayedHeader,
        links: {
          read: {
            method: 'get',
            path: '/admin/groups/{name}',
            parameters: { name: '$response.body#/name', enterpriseId: '$response.body#/enterpriseId' },
          },
          delete: {
            method: 'delete',
            path: '/admin/groups/{name}',
            parameters: { name: '$response.body#/name', enterpriseId: '$response.body#/enterpriseId' },
          },
        },
      },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '409': {
        description: `The group's owner has a group of the name; ${IDEMPOTENCY_KEY_409}`,
        schema: 'common.error.json',
        headers: idempotencyKeyInUseHeaders,
      },
      '415': notJsonError,
      '422': { description: `Validation failed; ${IDEMPOTENCY_KEY_422}`, schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/groups',
    summary: "List every group, shared and owned (enterpriseId: one enterprise's own), by name, a page at a time",
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [groupOwner, ...adminListPageQuery('Groups')],
    responses: {
      '200': { description: 'A page of groups', schema: 'admin-groups.group.json', array: true, headers: nextPageLinkHeader },
      '401': adminTokenErrors['401'],
      '422': { description: 'Invalid limit or cursor, or `[Invalid field enterpriseId]` for the query', schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/groups/{name}',
    summary: 'Read one group',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [groupOwner],
    responses: {
      '200': { description: 'The group', schema: 'admin-groups.group.json' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such group', schema: 'common.error.json' },
      '422': invalidGroupOwner,
    },
  },
  {
    method: 'delete',
    path: '/admin/groups/{name}',
    summary:
      "Delete a group that no user (other than DELETED ones) names as primary or secondary group: an enterprise's own group counts that enterprise's users, a shared one the users of every enterprise without its own group of the name",
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [groupOwner],
    responses: {
      '204': { description: 'Deleted' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such group', schema: 'common.error.json' },
      '422': invalidGroupOwner,
      '409': {
        description: '`Group <name> is in use by N users`, or `Group <name> is being deleted` while another deletion of it decides',
        schema: 'common.error.json',
      },
      '503': {
        description: 'The deletion took too long to be sure no user joined meanwhile: nothing deleted; retry (Retry-After header)',
        schema: 'common.error.json',
      },
    },
  },
  {
    method: 'get',
    path: '/admin/activity',
    summary:
      'The activity record (append-only): every change to users, clients and templates, who made it, when, and its comments; newest first',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      { name: 'enterpriseId', description: 'Only this enterprise', schema: { $ref: 'common.ids.json#/$defs/enterpriseId' } },
      { name: 'userId', description: 'Only this user', schema: { $ref: 'common.ids.json#/$defs/userId' } },
      { name: 'limit', description: 'Entries per page, 1 to 500 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 500 } },
      {
        name: 'before',
        description: "The previous page's `next`: older entries only",
        schema: { type: 'string', pattern: '^[0-9a-f]{24}$' },
      },
    ],
    responses: {
      '200': { description: 'One page', schema: 'admin-activity.page.json' },
      '401': adminTokenErrors['401'],
      '422': errorResponses['422'],
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'put',
    path: '/admin/users/{userId}/blocked',
    summary:
      'Block or unblock a user: a blocked user cannot sign in or activate, their user tokens get 403 user_blocked, enterprise calls for them are 404; blocking ends a pending activation code, pending notifications and sign-ins, and unblocking restores none of them',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: 'The enterprise of the user (default `default`)',
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
    ],
    requestSchema: 'admin-users.blocked.json',
    responses: {
      '200': { description: 'The user as it now is', schema: 'users.user.json' },
      '400': { description: 'Malformed body', schema: 'common.error.json' },
      '401': adminTokenErrors['401'],
      '404': { description: 'User not found', schema: 'common.error.json' },
      '415': notJsonError,
      '422': {
        description: '`Invalid field <name>: <rule>` for the body, `[Invalid field enterpriseId]` for the query',
        schema: 'common.error.json',
      },
    },
  },
  {
    method: 'delete',
    path: '/admin/users/{userId}/sign-in-lock',
    summary:
      'Unlock sign-in: after too many wrong login codes in a row a user cannot sign in until this (or a completed activation); also starts their count of wrong codes over',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: 'The enterprise of the user (default `default`)',
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    responses: {
      '204': { description: 'Sign-in is open (whether or not it was locked); recorded in the activity record' },
      '401': adminTokenErrors['401'],
      '404': { description: 'User not found', schema: 'common.error.json' },
      '422': { description: 'Invalid enterpriseId', schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/admin/signing-keys/rotation',
    summary:
      'Rotate the token signing keys: the access-token key, the RSA key of ID tokens unless it is SIGNING_KEY_JWK, and a key of the other algorithm left by a change of ACCESS_TOKEN_SIGNING_ALG. Each new key is published at once and signs from activeFrom; the replaced one is accepted until previousKeyRemovedAt',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'retireAtOnce',
        description:
          'true: the new keys sign now and the replaced ones are removed now, so the tokens they signed are refused (a key that may have leaked); default false',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    headers: [idempotencyKeyHeader()],
    responses: {
      '200': {
        description: 'The new keys and their moments',
        schema: 'admin-signing-keys.rotation.json',
        headers: idempotentReplayedHeader,
      },
      '401': adminTokenErrors['401'],
      '409': {
        description: `Another rotation won at the same moment (rotate again), or the access-token key is SIGNING_KEY_JWK, which the service cannot rotate; ${IDEMPOTENCY_KEY_409}`,
        schema: 'common.error.json',
        headers: idempotencyKeyInUseHeaders,
      },
      '422': { description: `Invalid retireAtOnce; ${IDEMPOTENCY_KEY_422}`, schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/users/{userId}/passkeys',
    summary: "A user's passkeys, oldest first (no key material)",
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: 'The enterprise of the user (default `default`)',
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
    ],
    responses: {
      '200': { description: 'The passkeys', schema: 'passkeys.passkey.json', array: true },
      '401': adminTokenErrors['401'],
      '404': { description: 'User not found', schema: 'common.error.json' },
      '422': { description: 'Invalid enterpriseId', schema: 'common.error.json' },
    },
  },
  {
    method: 'delete',
    path: '/admin/users/{userId}/passkeys/{passkeyId}',
    summary: "Remove one of a user's passkeys (a lost device): it can no longer sign in; recorded in the activity record",
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: 'The enterprise of the user (default `default`)',
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
      { name: 'comments', description: 'Note kept in the activity record (at most 1000 characters kept)', schema: { type: 'string' } },
    ],
    responses: {
      '204': { description: 'Removed' },
      '401': adminTokenErrors['401'],
      '404': { description: 'The user has no passkey by that id (or it was removed already)', schema: 'common.error.json' },
      '422': { description: 'Invalid enterpriseId', schema: 'common.error.json' },
    },
  },
];
