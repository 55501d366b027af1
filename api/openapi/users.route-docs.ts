import type { RouteDoc } from './route-docs.types.js';

const error = (description: string) => ({ description, schema: 'common.error.json' });
const bearer = { kind: 'bearer', scope: 'users' } as const;
const guardErrors = {
  '401': { description: 'Missing, malformed, invalid or expired access token, or `IP not whitelisted` (caller outside the allowedIps of the client; error body)', schema: 'common.bearer-error.json' },
  '403': { description: 'Token without the users scope', schema: 'common.bearer-error.json' },
};

export const usersRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/users',
    summary: 'Add (enroll) a user under existing groups; the activation code is sent when generated',
    tag: 'users',
    auth: bearer,
    requestSchema: 'users.create.json',
    responses: {
      '201': {
        description: 'Created: empty body, `Location: /v1/users/<userId>`',
        links: {
          read: { method: 'get', path: '/v1/users/{userId}', parameters: { userId: '$request.body#/userId' } },
          delete: { method: 'delete', path: '/v1/users/{userId}', parameters: { userId: '$request.body#/userId' } },
          reissue: { method: 'post', path: '/admin/users/{userId}/activation', parameters: { userId: '$request.body#/userId' } },
        },
      },
      '400': error('`Malformed request body` (not JSON, not an object), or selfie compliance `Failed.[<CODE>]`'),
      ...guardErrors,
      '409': error('`User is <STATUS>` (with userStatus), groups the same, a group missing, mobile number registered (checked in that order)'),
      '415': error("`Content type '<type>' not supported`"),
      '422': error('`[Invalid field <name>]`, the first bad field in the order of the properties of the request schema'),
      '500': error("`Failed to consume aware server's analyze API.` when the face analyzer fails or times out"),
    },
  },
  {
    method: 'post',
    path: '/v1/users/activate',
    summary: 'User-facing activation with the code from the activation message (no token); registers the device key',
    tag: 'users',
    auth: { kind: 'none' },
    requestSchema: 'users.activate.json',
    responses: {
      '200': { description: 'ACTIVE', schema: 'users.activated.json' },
      '400': error('Malformed request body'),
      '410': { description: 'The right code, but expired', schema: 'users.activation-refused.json' },
      '415': error('Content type is not application/json'),
      '422': { description: 'Wrong code, or a userId with nothing to activate (same answer), with attemptsLeft; or `[Invalid field <name>]`', schema: 'users.activation-refused.json' },
      '423': { description: 'Locked after 5 wrong codes until an admin re-issues', schema: 'users.activation-refused.json' },
      '429': error('Rate limit per user or per address (Retry-After header)'),
    },
  },
  {
    method: 'get',
    path: '/v1/users/{userId}',
    summary: 'Read a user, without secrets',
    tag: 'users',
    auth: bearer,
    responses: { '200': { description: 'The user', schema: 'users.user.json' }, ...guardErrors, '404': error('User not found') },
  },
  {
    method: 'delete',
    path: '/v1/users/{userId}',
    summary: 'Delete a user: status DELETED, no more OTPs, the mobile number is free again (the userId stays taken)',
    tag: 'users',
    auth: bearer,
    responses: { '204': { description: 'Deleted (also when already DELETED)' }, ...guardErrors, '404': error('User not found') },
  },
  {
    method: 'post',
    path: '/admin/users/{userId}/activation',
    summary: 'Re-issue the activation: new generated code, attempts reset, new expiry, message sent again',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '202': { description: 'Queued', schema: 'users.activation-reissued.json' },
      '401': error('Missing or wrong admin token'),
      '404': error('User not found'),
      '409': error('`User is <STATUS>` when not waiting for activation, or no address to send to'),
    },
  },
];
