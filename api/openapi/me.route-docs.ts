import type { RouteDoc } from './route-docs.types.js';

// The signed-in user's own routes: a user's access token (authorization code flow) only. Their
// refusals carry the client library's code, as every refusal under /v1/me does.
const userError = (description: string) => ({ description, schema: 'notifications.user-error.json' });

export const meRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/me',
    summary: "The signed-in user's profile, without secrets (user token with scope notifications; enterprise tokens are refused)",
    tag: 'me',
    auth: { kind: 'user', scope: 'notifications' },
    responses: {
      '200': { description: 'The user', schema: 'users.user.json' },
      '401': userError('Missing header, or a token that is not a valid user token (enterprise tokens included) (code 39)'),
      '403': userError('insufficient_scope (code 39), or user_blocked (code 141)'),
    },
  },
  ...passkeyRouteDocs(),
];

function passkeyRouteDocs(): RouteDoc[] {
  const auth = { kind: 'user', scope: 'notifications' } as const;
  const refusals = {
    '401': userError('Missing header, or a token that is not a valid user token (code 39)'),
    '403': userError(
      "insufficient_scope (code 39; also for a third-party app's token: passkeys are managed from the enterprise's own apps only), or user_blocked (code 141)",
    ),
  };
  // Asking for registration options, and removing a passkey, also need a recent sign-in (RFC 9470
  // step-up): the app signs the user in again with the answer's max_age (or prompt=login).
  const recentSignInRefusals = (change: 'add' | 'remove') => ({
    ...refusals,
    '401': userError(
      `Missing header, or a token that is not a valid user token; or insufficient_user_authentication with max_age: the sign-in is too old to ${change} a passkey, sign in again with that max_age in the authorization request (or prompt=login) and retry with the new token (code 39)`,
    ),
  });
  return [
    {
      method: 'post',
      path: '/v1/me/passkeys/registration-options',
      summary:
        'Start registering a passkey: WebAuthn creation options with a challenge good once, for this user through this app (no body)',
      tag: 'me',
      auth,
      responses: {
        '200': {
          description: 'Options for navigator.credentials.create',
          schema: 'passkeys.registration-options.json',
          links: { register: { method: 'post', path: '/v1/me/passkeys', parameters: {}, description: 'Send the authenticator answer' } },
        },
        ...recentSignInRefusals('add'),
      },
    },
    {
      method: 'post',
      path: '/v1/me/passkeys',
      summary:
        'Register a passkey: the authenticator answer to the options (challenge, origin, relying party id and user verification are checked)',
      tag: 'me',
      auth,
      requestSchema: 'passkeys.register.json',
      responses: {
        '201': {
          description: 'The passkey',
          schema: 'passkeys.passkey.json',
          links: {
            remove: { method: 'delete', path: '/v1/me/passkeys/{passkeyId}', parameters: { passkeyId: '$response.body#/id' } },
          },
        },
        ...refusals,
        '409': userError('This passkey is already registered (code 4)'),
        '422': userError(
          'Invalid body; unknown, expired or used registration options; the answer does not verify (origin, relying party, user verification, signature); the user has 20 passkeys already (code 4)',
        ),
      },
    },
    {
      method: 'get',
      path: '/v1/me/passkeys',
      summary: "The signed-in user's passkeys, oldest first",
      tag: 'me',
      auth,
      responses: { '200': { description: 'The passkeys', schema: 'passkeys.passkey.json', array: true }, ...refusals },
    },
    {
      method: 'delete',
      path: '/v1/me/passkeys/{passkeyId}',
      summary: 'Remove one of your passkeys: it can no longer sign in',
      tag: 'me',
      auth,
      responses: {
        '204': { description: 'Removed' },
        ...recentSignInRefusals('remove'),
        '404': userError('You have no passkey by that id (or it was removed already) (code 4)'),
      },
    },
  ];
}
