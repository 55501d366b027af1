import type { RouteDoc } from './route-docs.types.js';

const error = (description: string) => ({ description, schema: 'common.error.json' });
const bearer = { kind: 'bearer', scope: 'users' } as const;
const guardErrors = {
  '401': { description: 'Missing, malformed, invalid or expired access token (D2), or `IP not whitelisted` (D22, D1 body)', schema: 'common.bearer-error.json' },
  '403': { description: 'Token without the users scope', schema: 'common.bearer-error.json' },
};
const notAllowed = (path: string, allow: string, method: RouteDoc['method']): RouteDoc => ({
  method,
  path,
  summary: `Not supported: 405 \`Request method '${method.toUpperCase()}' is not supported\` (Allow: ${allow})`,
  tag: 'users',
  auth: bearer,
  responses: { ...guardErrors, '405': error('Method Not Allowed') },
});

export const usersRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/users',
    summary: 'Add (enroll) a user under existing groups; the activation code is sent when generated (spec 4.3, D16-D22)',
    tag: 'users',
    auth: bearer,
    requestSchema: 'users.create.json',
    responses: {
      '201': { description: 'Created: empty body, `Location: /v1/users/<userId>`' },
      '400': error('`Malformed request body` (not JSON, not an object), or selfie compliance `Failed.[<CODE>]`'),
      ...guardErrors,
      '405': error("`Request method '<method>' is not supported` for any other method"),
      '409': error('`User is <STATUS>` (with userStatus), groups the same, a group missing, mobile number registered (D19 order)'),
      '415': error("`Content type '<type>' not supported`"),
      '422': error('`[Invalid field <name>]`, first field in the order of spec 2.5'),
      '500': error("`Failed to consume aware server's analyze API.` when the face analyzer fails or times out"),
    },
  },
  ...(['get', 'put', 'patch', 'delete'] as const).map((m) => notAllowed('/v1/users', 'POST', m)),
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
    summary: 'Delete a user: status DELETED, no more OTPs, pending notifications end DISCARD, the mobile number is free again (the userId stays taken)',
    tag: 'users',
    auth: bearer,
    responses: { '204': { description: 'Deleted (also when already DELETED)' }, ...guardErrors, '404': error('User not found') },
  },
  ...(['post', 'put', 'patch'] as const).map((m) => notAllowed('/v1/users/{userId}', 'GET, DELETE', m)),
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
