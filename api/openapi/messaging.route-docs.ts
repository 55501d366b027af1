import { commonErrors as errorResponses } from './common-responses.js';
import type { RouteDoc } from './route-docs.types.js';

// Templates, the outbox and delivery-receipt webhooks.
export const messagingRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/templates',
    summary: 'List message templates',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '200': { description: 'Every template, by name', schema: 'admin-templates.template.json', array: true },
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
    },
  },
  {
    method: 'get',
    path: '/admin/templates/{name}',
    summary: 'Read one message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '200': { description: 'The template', schema: 'admin-templates.template.json' },
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '404': { description: 'No such template', schema: 'common.error.json' },
    },
  },
  {
    method: 'post',
    path: '/admin/templates',
    summary: 'Create a message template',
    tag: 'admin',
    auth: { kind: 'admin' },
    requestSchema: 'admin-templates.create.json',
    responses: {
      '201': {
        description: 'Created',
        schema: 'admin-templates.template.json',
        links: {
          read: { method: 'get', path: '/admin/templates/{name}', parameters: { name: '$response.body#/name' } },
          update: { method: 'put', path: '/admin/templates/{name}', parameters: { name: '$response.body#/name' } },
          delete: { method: 'delete', path: '/admin/templates/{name}', parameters: { name: '$response.body#/name' } },
        },
      },
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
    method: 'delete',
    path: '/admin/templates/{name}',
    summary: 'Delete a message template an admin created (the shipped defaults cannot be deleted: update them instead)',
    tag: 'admin',
    auth: { kind: 'admin' },
    responses: {
      '204': { description: 'Deleted' },
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '404': { description: 'No such template', schema: 'common.error.json' },
      '409': { description: 'A default template the service needs', schema: 'common.error.json' },
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
      '401': { description: 'Missing or wrong admin token', schema: 'common.error.json' },
      '422': { description: 'Invalid to or limit', schema: 'common.error.json' },
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
