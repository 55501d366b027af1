import { ZONE_OFFSETS_MINUTES } from '../../core/notifications/notification-dates.js';
import { FINAL_STATUSES } from '../../core/notifications/notification.types.js';
import {
  IDEMPOTENCY_KEY_409,
  IDEMPOTENCY_KEY_422,
  idempotencyKeyHeader,
  idempotencyKeyInUseHeaders,
  idempotentReplayedHeader,
} from './idempotency-key-docs.js';
import { rateLimitedHeaders, rateLimitHeaders } from './rate-limit-header-docs.js';
import type { RouteDoc } from './route-docs.types.js';

const error = (description: string) => ({ description, schema: 'common.error.json' });
// The answers that reached the budgets carry them (a body refused before, and a replay, carry none).
const CREATE_BUDGETS = 'notifications-per-client, notifications-per-enterprise, notifications-per-user';
const userError = (description: string) => ({ description, schema: 'notifications.user-error.json' });
const bearer = { kind: 'bearer', scope: 'notifications' } as const;
const user = { kind: 'user', scope: 'notifications' } as const;
const guardErrors = {
  '401': {
    description: 'Missing, malformed, invalid or expired access token, or `IP not whitelisted` (error body)',
    schema: 'common.bearer-error.json',
  },
  '403': { description: 'Token without the notifications scope', schema: 'common.bearer-error.json' },
};
const userGuardErrors = {
  '401': userError(
    'Missing, malformed, invalid or expired token, an enterprise (client_credentials) token, or a user who is not ACTIVE (code 39)',
  ),
  '403': userError('`user_blocked` (code 141), or a token without the notifications scope (code 39)'),
};
// The client library sends every parameter, an unused one as an empty string: empty means not given.
const UNUSED_IF_EMPTY = ' An empty value means not given.';
// The format of core/notifications/notification-dates.ts; empty allowed. [0-9], not \d: other
// scripts' digits are refused.
const CLIENT_LIBRARY_DATE = `^$|^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2} ?(${Object.keys(ZONE_OFFSETS_MINUTES).join('|')}|[+-][0-9]{2}:?[0-9]{2})$`;
const clientLibraryDate = (bound: string) => ({
  name: bound === 'from' ? 'startDate' : 'endDate',
  description: `Only notifications created ${bound} this moment: \`yyyy-MM-dd'T'HH:mm:ss\` then a zone abbreviation (UTC, IST...) or an offset (+05:30).${UNUSED_IF_EMPTY}`,
  schema: { type: 'string', pattern: CLIENT_LIBRARY_DATE, examples: ['2026-11-21T09:00:00 UTC', '2026-11-21T14:30:00+05:30'] },
});
// A whole number, or the empty string the client library sends for a parameter it does not use.
const integerOrEmpty = (minimum: number) => ({
  anyOf: [
    { type: 'integer', minimum, maximum: 999999999 },
    { type: 'string', maxLength: 0 },
  ],
});
const listQuery: NonNullable<RouteDoc['query']> = [
  {
    name: 'recordCount',
    description: `Records per page; 0 (the default) means all.${UNUSED_IF_EMPTY}`,
    schema: integerOrEmpty(0),
  },
  {
    name: 'startIndex',
    description: `Position of the first record, from 1 (the default).${UNUSED_IF_EMPTY}`,
    schema: integerOrEmpty(1),
  },
  {
    name: 'enterpriseID',
    description: `Only this enterprise's notifications: another than the user's own gives an empty list.${UNUSED_IF_EMPTY}`,
    schema: { type: 'string' },
  },
  clientLibraryDate('from'),
  clientLibraryDate('up to'),
];
const historyQuery: NonNullable<RouteDoc['query']> = [
  ...listQuery,
  {
    name: 'notificationStatus',
    description: `Only this final state.${UNUSED_IF_EMPTY}`,
    schema: { type: 'string', enum: [...FINAL_STATUSES] },
  },
  { name: 'actionPerformed', description: `Only notifications answered with this action.${UNUSED_IF_EMPTY}`, schema: { type: 'string' } },
  {
    name: 'keywordSearch',
    description: `Text in any subject or message, any language, case-insensitive, as plain text.${UNUSED_IF_EMPTY}`,
    schema: { type: 'string', maxLength: 200 },
  },
  { name: 'deviceID', description: `Only notifications answered from this device.${UNUSED_IF_EMPTY}`, schema: { type: 'string' } },
];

export const notificationsRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/notifications',
    summary:
      "Create an approval notification for a user of the client's enterprise; with numberMatch the answer carries the number to show",
    tag: 'notifications',
    auth: bearer,
    headers: [idempotencyKeyHeader()],
    requestSchema: 'notifications.create.json',
    responses: {
      '201': {
        description: 'Created (`Location: /v1/notifications/<uuid>`)',
        schema: 'notifications.created.json',
        headers: { ...rateLimitHeaders(CREATE_BUDGETS), ...idempotentReplayedHeader },
      },
      '400': error('`Malformed request body` (empty, not JSON, not an object)'),
      ...guardErrors,
      '404': { ...error('`User not found`: unknown in this enterprise, DELETED or blocked'), headers: rateLimitHeaders(CREATE_BUDGETS) },
      '409': { ...error(IDEMPOTENCY_KEY_409), headers: idempotencyKeyInUseHeaders },
      '415': error("`Content type '<type>' not supported`"),
      '422': error(
        [
          '`Invalid field <name>: <rule>` (also: action values not distinct, ds_required for a user without a device key, callbackUrl not https or not reaching a public address: `Invalid field callbackUrl: must reach a public address (<address> is in the <range> range)` for loopback, private, shared, link-local, unique-local, unspecified, multicast and other non-public ranges in any spelling, e.g. 127.1 or [::ffff:127.0.0.1])',
          IDEMPOTENCY_KEY_422,
        ].join('; '),
      ),
      '429': {
        ...error(
          "`Too many requests: retry after <s> seconds` (Retry-After, RateLimit-Policy, RateLimit): the client's budget (`notifications-per-client`), the enterprise's across its clients (`notifications-per-enterprise`) or the person's across the enterprise's clients (`notifications-per-user`) is spent",
        ),
        headers: rateLimitedHeaders(CREATE_BUDGETS),
      },
    },
  },
  {
    method: 'get',
    path: '/v1/notifications/{uuid}',
    summary:
      'Read a notification the calling client created: status, action taken, signing status. With `wait`, the answer comes as soon as the notification reaches a final state (whichever API process it ends through), or after `wait` seconds with the state as it is then',
    tag: 'notifications',
    auth: bearer,
    query: [
      {
        name: 'wait',
        description:
          'Seconds to wait for a final state (0 to 60; 0 or absent answers at once). A process already holding 1000 waiting requests answers at once; a draining process answers its waiting requests within a second',
        schema: { type: 'integer', minimum: 0, maximum: 60 },
      },
    ],
    responses: {
      '200': { description: 'The notification', schema: 'notifications.notification.json' },
      ...guardErrors,
      '404': error('`Notification not found`: unknown, or created by another client (of this enterprise or another)'),
      '422': error('`[Invalid field wait]`: not a whole number of seconds from 0 to 60'),
    },
  },
  {
    method: 'post',
    path: '/v1/notifications/{uuid}/cancel',
    summary: 'Cancel a pending notification the calling client created (CANCELLED)',
    tag: 'notifications',
    auth: bearer,
    responses: {
      '200': { description: 'The cancelled notification', schema: 'notifications.notification.json' },
      ...guardErrors,
      '404': error('`Notification not found`: unknown, or created by another client'),
      '409': error(
        '`Notification is <STATUS>` with notificationStatus: it already ended (EXPIRED included, also when only the clock says so); when the user answered it (UPDATED), also the answer: action and is_ds_verified',
      ),
    },
  },
  {
    method: 'get',
    path: '/v1/me/notifications',
    summary: "GetNotifications: the signed-in user's pending notifications, newest first, a page at a time",
    tag: 'notifications (user)',
    auth: user,
    query: listQuery,
    responses: {
      '200': { description: 'Pending notifications', schema: 'notifications.active-list.json' },
      '400': userError('`Invalid field <name>: <rule>` for a parameter (code 4)'),
      ...userGuardErrors,
    },
  },
  {
    method: 'get',
    path: '/v1/me/notifications/stream',
    summary:
      "Server-sent events of the signed-in user's notifications: `created` (a new one; data notification_uuid, status ACTIVE, expires_at) and `ended` (a final state given by an answer, dismissal, cancel or discard; expiry sends nothing). Each event has an id; send it back as `Last-Event-ID` to get what was missed (the last 100 events, kept a day). A comment every 15 s; the token is checked again each time and the stream ends when it no longer passes",
    tag: 'notifications (user)',
    auth: user,
    headers: [
      {
        name: 'Last-Event-ID',
        description: 'The id of the last event received: the events after it are sent first',
        schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' },
      },
    ],
    responses: {
      '200': { description: 'An endless text/event-stream', contentType: 'text/event-stream' },
      ...userGuardErrors,
      '503': userError(
        'Too many open streams on this process or for this user (10 per user on one process), or events unavailable (Redis down); retry after Retry-After',
      ),
    },
  },
  {
    method: 'get',
    path: '/v1/me/notifications/history',
    summary:
      "GetNotificationHistory: the signed-in user's ended notifications, newest first, a page at a time, with GetNotifications' filters and four more",
    tag: 'notifications (user)',
    auth: user,
    query: historyQuery,
    responses: {
      '200': { description: 'Ended notifications', schema: 'notifications.history.json' },
      '400': userError('`Invalid field <name>: <rule>` for a parameter (code 4)'),
      ...userGuardErrors,
    },
  },
  {
    method: 'post',
    path: '/v1/me/notifications/{uuid}/action',
    summary:
      'UpdateNotification: answer with one of the actions, signed when ds_required; with numberMatch, approving (the first action, or actions with requiresNumber: true) carries the number, rejecting or reporting fraud never needs it',
    tag: 'notifications (user)',
    auth: user,
    requestSchema: 'notifications.answer.json',
    responses: {
      '200': { description: 'Acknowledged (UPDATED)', schema: 'notifications.answered.json' },
      '400': userError('`Malformed request body` (code 4)'),
      ...userGuardErrors,
      '404': userError(
        "`Notification not found`: unknown or another user's; `User not found`: the user was deleted after the token check (code 4)",
      ),
      '409': userError(
        '`Notification is <STATUS>` with notificationStatus (code 4); when it was answered (UPDATED), also the stored answer, action and is_ds_verified, so a client that sends the same answer again (its first reply lost) recognises its own; no action for any other end',
      ),
      '410': userError('`Notification expired`: past expiresAt, whatever the record still says (code 4)'),
      '415': userError("`Content type '<type>' not supported` (code 4)"),
      '422': userError(
        'Unknown action, missing signature, or no number for an action that needs it (nothing changes); wrong number (counted, with `triesLeft` and a message saying what to do; the third ends it TAMPERED); or a signature that does not verify (TAMPERED, signing_status Failed) (code 4)',
      ),
    },
  },
  {
    method: 'post',
    path: '/v1/me/notifications/{uuid}/dismiss',
    summary: 'Dismiss a pending notification (DISMISSED)',
    tag: 'notifications (user)',
    auth: user,
    responses: {
      '200': { description: 'Acknowledged', schema: 'notifications.answered.json' },
      ...userGuardErrors,
      '404': userError('`Notification not found` (code 4)'),
      '409': userError('`Notification is <STATUS>` with notificationStatus, and action and is_ds_verified when it was answered (code 4)'),
      '410': userError('`Notification expired` (code 4)'),
    },
  },
];
