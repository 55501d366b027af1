import type { RouteDoc } from './route-docs.types.js';

// Web Push subscriptions of the signed-in user: a user's access token with the notifications scope.
const userError = (description: string) => ({ description, schema: 'notifications.user-error.json' });
const user = { kind: 'user', scope: 'notifications' } as const;
const userGuardErrors = {
  '401': userError(
    'Missing, malformed, invalid or expired token, an enterprise (client_credentials) token, or a user who is not ACTIVE (code 39)',
  ),
  '403': userError('`user_blocked` (code 141), or a token without the notifications scope (code 39)'),
};

export const pushRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/me/push-key',
    summary: "The service's VAPID public key, to pass to PushManager.subscribe as applicationServerKey",
    tag: 'push (user)',
    auth: user,
    responses: {
      '200': { description: 'The key', schema: 'push-subscriptions.key.json' },
      ...userGuardErrors,
    },
  },
  {
    method: 'get',
    path: '/v1/me/push-subscriptions',
    summary: "The signed-in user's push subscriptions, oldest first (keys are never shown)",
    tag: 'push (user)',
    auth: user,
    responses: {
      '200': { description: 'The subscriptions', schema: 'push-subscriptions.list.json' },
      ...userGuardErrors,
    },
  },
  {
    method: 'post',
    path: '/v1/me/push-subscriptions',
    summary:
      'Register a browser push subscription (PushSubscription.toJSON()). Each new notification of the user then sends every subscription a push that only says something is waiting. The same endpoint again updates its keys (200)',
    tag: 'push (user)',
    auth: user,
    requestSchema: 'push-subscriptions.register.json',
    responses: {
      '201': {
        description: 'Registered (`Location: /v1/me/push-subscriptions/<subscription_id>`)',
        schema: 'push-subscriptions.subscription.json',
        links: {
          delete: {
            method: 'delete',
            path: '/v1/me/push-subscriptions/{subscriptionId}',
            parameters: { subscriptionId: '$response.body#/subscription_id' },
            description: 'Unregister it (when the user signs out of this browser)',
          },
        },
      },
      '200': { description: 'Already registered: keys and expiration updated', schema: 'push-subscriptions.subscription.json' },
      '400': userError('`Malformed request body` (code 4)'),
      ...userGuardErrors,
      '409': userError('`Too many push subscriptions: at most <n> per user; delete one you no longer use first` (code 4)'),
      '415': userError("`Content type '<type>' not supported` (code 4)"),
      '422': userError(
        '`Invalid field <name>: <rule>` (code 4): endpoint not https or not reaching a public address (`must reach a public address (<address> is in the <range> range)`, loopback only where the deployment allows it), with credentials or a fragment; keys.p256dh not a P-256 public key; keys.auth not 16 bytes; expirationTime in the past or above 253402300799999 (the end of year 9999)',
      ),
    },
  },
  {
    method: 'delete',
    path: '/v1/me/push-subscriptions/{subscriptionId}',
    summary: 'Unregister a push subscription (no more pushes to that browser)',
    tag: 'push (user)',
    auth: user,
    responses: {
      '204': { description: 'Deleted' },
      ...userGuardErrors,
      '404': userError("`Push subscription not found`: unknown, already deleted, or another user's (code 4)"),
    },
  },
];
