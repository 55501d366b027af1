import {
  IDEMPOTENCY_KEY_409,
  IDEMPOTENCY_KEY_422,
  idempotencyKeyHeader,
  idempotencyKeyInUseHeaders,
  idempotentReplayedHeader,
} from './idempotency-key-docs.js';
import type { RouteDoc } from './route-docs.types.js';
import { adminTokenErrors } from './common-responses.js';

const error = (description: string) => ({ description, schema: 'common.error.json' });
const bearer = { kind: 'bearer', scope: 'users' } as const;
const guardErrors = {
  '401': {
    description:
      "Missing, malformed, invalid or expired access token (`{error, error_description}`), or the caller's address outside the client's allowedIps: error body with message `IP not whitelisted` and `detail` naming the address seen",
    schema: 'common.unauthorized.json',
  },
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
      '400': error('`Malformed request body` (empty, not JSON, not an object), or selfie compliance `Failed.[<CODE>]`'),
      ...guardErrors,
      '409': error(
        '`User is <STATUS>` (with userStatus), groups the same, a group missing or being deleted, mobile number registered (checked in that order)',
      ),
      '415': error("`Content type '<type>' not supported`"),
      '422': error(
        '`[Invalid field <name>]`, the first bad field in the order of the properties of the request schema; a mobileNumber outside SMS_ALLOWED_COUNTRIES also carries `reason`',
      ),
      '429': error(
        "`Too many requests: retry after <s> seconds` (Retry-After, RateLimit-Policy, RateLimit): an enrollment that sends a code (generated, to an emailId or mobileNumber) when the client's budget (`enrollment-messages-per-client`) or its enterprise's (`enrollment-messages-per-enterprise`) is spent",
      ),
      '500': error("`Failed to consume aware server's analyze API.` when the face analyzer fails or times out"),
    },
  },
  {
    method: 'post',
    path: '/v1/users/activate',
    summary:
      'User-facing activation with the code from the activation message (no token); registers the device key. Known and unknown users get the same answers in the same time; guessing is throttled per user and address, then per user (docs/security.md)',
    tag: 'users',
    auth: { kind: 'none' },
    requestSchema: 'users.activate.json',
    responses: {
      '200': { description: 'ACTIVE', schema: 'users.activated.json' },
      '400': error('Malformed request body'),
      '410': { description: 'The right code, but expired', schema: 'users.activation-refused.json' },
      '415': error('Content type is not application/json'),
      '422': {
        description:
          'Wrong code, or a userId with nothing to activate (unknown, ACTIVE, DELETED or blocked: same answer), with attemptsLeft (checks left before the code is void); or `[Invalid field <name>]`',
        schema: 'users.activation-refused.json',
      },
      '423': {
        description: 'The code is void after 100 consecutive wrong codes (ACTIVATION_MAX_FAILURES) until an admin re-issues',
        schema: 'users.activation-refused.json',
      },
      '429': error(
        'Too many requests from the address, or too many wrong codes for the user (from this address, or from everywhere): wait `Retry-After` seconds',
      ),
    },
  },
  {
    method: 'get',
    path: '/v1/users',
    summary: "List the client's enterprise's users, oldest first (userId breaking ties), without secrets; cursor pagination",
    tag: 'users',
    auth: bearer,
    query: [
      { name: 'status', description: 'Only users in this status', schema: { enum: ['CREATED', 'ONBOARDING', 'ACTIVE', 'DELETED'] } },
      {
        name: 'group',
        description: 'Only users with this primary or secondary group',
        schema: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^,\\s]([^,]*[^,\\s])?$' },
      },
      { name: 'limit', description: 'Users per page, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      { name: 'cursor', description: "The previous page's `next` (opaque)", schema: { type: 'string', minLength: 1 } },
    ],
    responses: {
      '200': { description: 'One page; `next` when more users follow', schema: 'users.page.json' },
      ...guardErrors,
      '422': error('`[Invalid field <name>]`: status, group, limit or cursor malformed (checked in that order)'),
    },
  },
  {
    method: 'get',
    path: '/v1/users/{userId}',
    summary: "Read a user of the client's enterprise, without secrets (another enterprise's user is 404)",
    tag: 'users',
    auth: bearer,
    responses: { '200': { description: 'The user', schema: 'users.user.json' }, ...guardErrors, '404': error('User not found') },
  },
  {
    method: 'patch',
    path: '/v1/users/{userId}',
    summary:
      "Change a user's names, contacts or groups under enrollment's rules; recorded in the activity record (another enterprise's user is 404)",
    tag: 'users',
    auth: bearer,
    requestSchema: 'users.update.json',
    responses: {
      '200': { description: 'The user as changed (a patch that changes nothing answers the user as it is)', schema: 'users.user.json' },
      '400': error('`Malformed request body` (empty, not JSON, not an object)'),
      ...guardErrors,
      '404': error('User not found'),
      '409': error(
        '`User is DELETED` (with userStatus), groups the same, a group missing or being deleted, mobile number registered to another user (checked in that order)',
      ),
      '415': error("`Content type '<type>' not supported`"),
      '422': error(
        '`[Invalid field <name>]`, the first bad field in the order of the request schema (a mobileNumber outside SMS_ALLOWED_COUNTRIES also carries `reason`), or a patch that would leave a reachable user without contact; an empty object',
      ),
      '503': error(
        'The user kept changing under concurrent patches; retry (Retry-After header). Or a group it set is being deleted and the stored change could not be undone: read the user',
      ),
    },
  },
  {
    method: 'delete',
    path: '/v1/users/{userId}',
    summary:
      "Delete a user of the client's enterprise: status DELETED, no more OTPs, pending notifications end DISCARD, the mobile number is free again (the userId stays taken)",
    tag: 'users',
    auth: bearer,
    query: [{ name: 'comments', description: 'Note kept in the activity record', schema: { type: 'string', maxLength: 1000 } }],
    responses: {
      '204': { description: 'Deleted (also when already DELETED)' },
      ...guardErrors,
      '404': error('User not found'),
      '422': error('`[Invalid field comments]`'),
    },
  },
  {
    method: 'post',
    path: '/admin/users/{userId}/activation',
    summary: 'Re-issue the activation: new generated code, throttle reset, new expiry, message sent again',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: "The user's enterprise (default `default`)",
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
      { name: 'comments', description: 'Note kept in the activity record', schema: { type: 'string', maxLength: 1000 } },
    ],
    headers: [idempotencyKeyHeader()],
    responses: {
      '202': { description: 'Queued', schema: 'users.activation-reissued.json', headers: idempotentReplayedHeader },
      '401': adminTokenErrors['401'],
      '404': error('User not found'),
      '409': {
        ...error(
          `\`User is <STATUS>\` when not waiting for activation, \`User is blocked; unblock the user before issuing a new code\`, or no address to send to; ${IDEMPOTENCY_KEY_409}`,
        ),
        headers: idempotencyKeyInUseHeaders,
      },
      '422': error(
        `\`[Invalid field enterpriseId]\` or \`[Invalid field comments]\`; \`[Invalid field mobileNumber]\` with \`reason\` when the user's only address is a number outside SMS_ALLOWED_COUNTRIES (stored before the list was set: no code is stored); ${IDEMPOTENCY_KEY_422}`,
      ),
    },
  },
];
