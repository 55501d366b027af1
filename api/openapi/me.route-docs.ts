import type { RouteDoc } from './route-docs.types.js';

// The signed-in user's own routes: a user's access token (authorization code flow) only.
export const meRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/me',
    summary: "The signed-in user's profile, without secrets (user token with scope notifications; enterprise tokens are refused)",
    tag: 'me',
    auth: { kind: 'user', scope: 'notifications' },
    responses: {
      '200': { description: 'The user', schema: 'users.user.json' },
      '401': {
        description: 'Missing header, or a token that is not a valid user token (enterprise tokens included)',
        schema: 'common.bearer-error.json',
      },
      '403': { description: 'insufficient_scope, or user_blocked (with code 141)', schema: 'common.bearer-error.json' },
    },
  },
];
