import { adminTokenErrors, commonErrors as errorResponses, notJsonError } from './common-responses.js';
import {
  IDEMPOTENCY_KEY_409,
  IDEMPOTENCY_KEY_422,
  idempotencyKeyHeader,
  idempotencyKeyInUseHeaders,
  idempotentReplayedHeader,
} from './idempotency-key-docs.js';
import type { RouteDoc } from './route-docs.types.js';

/** A template is named by its name and owner: the owner in the query, none for a shared template. */
const templateOwner = {
  name: 'enterpriseId',
  description:
    "The template's owner: an enterprise's own template of the name; absent, the shared template (every enterprise's, as the seeded defaults)",
  schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
};
const invalidOwner = { description: '`[Invalid field enterpriseId]` for the query', schema: 'common.error.json' };

// Templates, the outbox and delivery-receipt webhooks.
export const messagingRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/templates',
    summary: 'List message templates',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'enterpriseId',
        description: "Only this enterprise's own templates",
        schema: { $ref: 'common.ids.json#/$defs/enterpriseId' },
      },
    ],
    responses: {
      '200': {
        description:
          "Every template of every owner (the shared ones and each enterprise's own, which show their enterpriseId), by name, without its HTML (GET /admin/templates/{name} shows it)",
        schema: 'admin-templates.summary.json',
        array: true,
      },
      '401': adminTokenErrors['401'],
      '422': invalidOwner,
    },
  },
  {
    method: 'get',
    path: '/admin/templates/{name}',
    summary: 'Read one message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [templateOwner],
    responses: {
      '200': { description: 'The template', schema: 'admin-templates.template.json' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such template for this owner', schema: 'common.error.json' },
      '422': invalidOwner,
    },
  },
  {
    method: 'post',
    path: '/admin/templates',
    summary: 'Create a message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    headers: [idempotencyKeyHeader()],
    requestSchema: 'admin-templates.create.json',
    responses: {
      '201': {
        description: 'Created',
        schema: 'admin-templates.template.json',
        headers: idempotentReplayedHeader,
        links: {
          read: {
            method: 'get',
            path: '/admin/templates/{name}',
            parameters: { name: '$response.body#/name', enterpriseId: '$response.body#/enterpriseId' },
          },
          update: {
            method: 'put',
            path: '/admin/templates/{name}',
            parameters: { name: '$response.body#/name', enterpriseId: '$response.body#/enterpriseId' },
          },
          delete: {
            method: 'delete',
            path: '/admin/templates/{name}',
            parameters: { name: '$response.body#/name', enterpriseId: '$response.body#/enterpriseId' },
          },
        },
      },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '409': {
        description: `This owner has a template of this name; ${IDEMPOTENCY_KEY_409}`,
        schema: 'common.error.json',
        headers: idempotencyKeyInUseHeaders,
      },
      '422': {
        description: `Invalid field, or HTML that does not compile, or that renders with more than 1000 partial calls or 1,000,000 characters (\`Invalid template html: ...\`); ${IDEMPOTENCY_KEY_422}`,
        schema: 'common.error.json',
      },
    },
  },
  {
    method: 'put',
    path: '/admin/templates/{name}',
    summary: 'Replace the content of a message template (its owner never changes)',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [templateOwner],
    requestSchema: 'admin-templates.update.json',
    responses: {
      '200': { description: 'Updated (version incremented)', schema: 'admin-templates.template.json' },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '404': { description: 'No such template for this owner', schema: 'common.error.json' },
      '422': {
        description:
          'Invalid field (`[Invalid field enterpriseId]` for the query), or HTML that does not compile, or that renders with more than 1000 partial calls or 1,000,000 characters (`Invalid template html: ...`)',
        schema: 'common.error.json',
      },
    },
  },
  {
    method: 'delete',
    path: '/admin/templates/{name}',
    summary:
      "Delete a message template an admin created (the shipped defaults cannot be deleted: update them instead; an enterprise's own template of a default's name can, its messages then use the shared one)",
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [templateOwner],
    responses: {
      '204': { description: 'Deleted' },
      '401': adminTokenErrors['401'],
      '404': { description: 'No such template for this owner', schema: 'common.error.json' },
      '409': { description: 'A shared default template the service needs', schema: 'common.error.json' },
      '422': invalidOwner,
    },
  },
  {
    method: 'get',
    path: '/admin/outbox',
    summary: 'Messages kept by the outbox provider, newest first',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'to',
        description: 'Only messages to this address: a phone number in E.164 or an e-mail address',
        schema: { type: 'string', minLength: 1 },
      },
      { name: 'limit', description: 'How many messages, 1 to 100 (default 20)', schema: { type: 'integer', minimum: 1, maximum: 100 } },
    ],
    responses: {
      '200': { description: 'Messages, newest first', schema: 'admin-outbox.message.json', array: true },
      '401': adminTokenErrors['401'],
      '422': { description: 'Invalid to or limit', schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/deliveries',
    summary:
      'Deliveries in one state (FAILED by default), the latest change first, a page at a time; never a code, addresses masked as in the logs',
    tag: 'admin',
    auth: { kind: 'admin' },
    query: [
      {
        name: 'state',
        description: 'QUEUED, SENT, DELIVERED or FAILED (default FAILED)',
        schema: { enum: ['QUEUED', 'SENT', 'DELIVERED', 'FAILED'] },
      },
      {
        name: 'since',
        description: 'Only deliveries whose last change (for FAILED: the failure) is at or after this instant, with its zone',
        schema: { type: 'string', format: 'date-time' },
      },
      { name: 'channel', description: 'SMS or EMAIL', schema: { enum: ['SMS', 'EMAIL'] } },
      {
        name: 'provider',
        description: 'Only deliveries that failed going through this provider (twilio, sendgrid, outbox)',
        schema: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,31}$' },
      },
      { name: 'cursor', description: "The previous page's `next`", schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$' } },
      { name: 'limit', description: 'Deliveries per page, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200 } },
    ],
    responses: {
      '200': { description: 'One page', schema: 'admin-deliveries.page.json' },
      '401': adminTokenErrors['401'],
      '422': { description: 'Invalid state, since, channel, provider, cursor or limit', schema: 'common.error.json' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'post',
    path: '/admin/deliveries/replay',
    summary:
      'Send FAILED deliveries again (by ids or by filter, at most 100 a request). dryRun (default true) only says what would be sent and what skipped, and why; a real run queues each once and is written to the activity record',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-deliveries.replay.json',
    responses: {
      '200': {
        description: 'What was (or would be) queued again, and what was skipped with the reason',
        schema: 'admin-deliveries.replayed.json',
      },
      '400': errorResponses['400'],
      '401': adminTokenErrors['401'],
      '415': notJsonError,
      '422': { description: 'Invalid field, or both or neither of ids and filter', schema: 'common.error.json' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'get',
    path: '/admin/delivery-replay',
    summary:
      'Page for operators (HTML): FAILED deliveries with filters, to pick some and replay them after a dry run. Admin token as Bearer, or in a browser HTTP Basic with the token as password',
    tag: 'admin pages',
    auth: { kind: 'admin' },
    query: [
      { name: 'channel', description: 'SMS or EMAIL (empty: any)', schema: { enum: ['', 'SMS', 'EMAIL'] } },
      { name: 'provider', description: 'Provider name (empty: any)', schema: { type: 'string' } },
      { name: 'since', description: 'Failed at or after this instant, with its zone (empty: any time)', schema: { type: 'string' } },
      { name: 'cursor', description: 'Where the previous page ended', schema: { type: 'string' } },
      { name: 'limit', description: 'Rows per page, 1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200 } },
    ],
    responses: {
      '200': { description: 'The page', contentType: 'text/html' },
      '401': { description: 'Missing or wrong admin token (asks a browser for Basic credentials)', schema: 'common.error.json' },
      '422': { description: 'The page, saying which filter is not valid', contentType: 'text/html' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'post',
    path: '/admin/delivery-replay/preview',
    summary: 'Dry run of the page of the selected deliveries: what would be sent again and what skipped, and why; a form to confirm (HTML)',
    tag: 'admin pages',
    auth: { kind: 'admin' },
    requestSchema: 'admin-delivery-replay.form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'The preview', contentType: 'text/html' },
      '400': { description: 'A form body that does not parse, or with more fields than 100 ids need', schema: 'common.error.json' },
      '401': adminTokenErrors['401'],
      '403': {
        description: 'Posted from another site (JSON), or without a valid form token from this page (HTML)',
        contentType: 'text/html',
      },
      '413': { description: 'Form larger than 32 kB', schema: 'common.error.json' },
      '422': { description: 'No delivery selected, more than 100, or an id that is not valid (HTML)', contentType: 'text/html' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'post',
    path: '/admin/delivery-replay/confirm',
    summary:
      'Replay from the page of the selected deliveries: each FAILED one still wanted is queued again once; recorded in the activity record (HTML)',
    tag: 'admin pages',
    auth: { kind: 'admin' },
    requestSchema: 'admin-delivery-replay.form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'What was queued and what skipped', contentType: 'text/html' },
      '400': { description: 'A form body that does not parse, or with more fields than 100 ids need', schema: 'common.error.json' },
      '401': adminTokenErrors['401'],
      '403': {
        description: 'Posted from another site (JSON), or without a valid form token from this page (HTML)',
        contentType: 'text/html',
      },
      '413': { description: 'Form larger than 32 kB', schema: 'common.error.json' },
      '422': { description: 'No delivery selected, more than 100, or an id that is not valid (HTML)', contentType: 'text/html' },
      '503': adminTokenErrors['503'],
    },
  },
  {
    method: 'post',
    path: '/webhooks/twilio/status',
    summary: 'Twilio SMS status callback (signed with X-Twilio-Signature)',
    tag: 'webhooks',
    auth: { kind: 'none' },
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '204': { description: 'Accepted' },
      '400': { description: 'A form body that does not parse or decompress', schema: 'common.error.json' },
      '403': { description: 'Missing or invalid signature', schema: 'common.error.json' },
      '413': { description: 'Request body is too large (100 kB)', schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/webhooks/sendgrid/events',
    summary: 'SendGrid signed Event Webhook (ECDSA, 5-minute timestamp window, de-duplicated by sg_event_id)',
    tag: 'webhooks',
    auth: { kind: 'none' },
    responses: {
      '200': { description: 'Events processed; duplicates counted' },
      '400': errorResponses['400'],
      '403': { description: 'Missing, invalid or stale signature', schema: 'common.error.json' },
      '413': { description: 'Request body is too large (5 MB)', schema: 'common.error.json' },
    },
  },
];
