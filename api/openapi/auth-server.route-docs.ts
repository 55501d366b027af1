import type { RouteDoc } from './route-docs.types.js';

/** The answer of the limit on failed client authentication (docs/authorization-server.md). */
const LIMITED =
  'temporarily_unavailable, with Retry-After: the caller address used up its failed client authentications, for this client or for all';

/** A store outage inside the authorization server (RFC 6749's code for "try again later"). */
const OUTAGE = 'temporarily_unavailable, with Retry-After: the database cannot be reached now';

/**
 * What a sign-in or sign-out page answers a refused request with: an HTML page to a browser
 * window, plain text to a request the browser says is not a page of its own
 * (api/auth-server/browser-window-only.ts).
 */
const PAGE_OR_REFUSAL = ['text/html', 'text/plain'] as const;

// Authorization server (oidc-provider), mounted at /svc/authserver.
export const authServerRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/.well-known/oauth-authorization-server/svc/authserver',
    summary: 'Authorization server metadata (RFC 8414, section 3 location)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Metadata document' } },
  },
  {
    method: 'get',
    path: '/svc/authserver/.well-known/oauth-authorization-server',
    summary: 'Authorization server metadata (RFC 8414, issuer-relative location)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Metadata document' } },
  },
  {
    method: 'get',
    path: '/svc/authserver/.well-known/openid-configuration',
    summary: 'Authorization server metadata (discovery)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '200': { description: 'Metadata document' } },
  },
  {
    method: 'get',
    path: '/svc/authserver/jwks',
    summary: 'Public keys that verify access tokens',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: { '200': { description: 'JSON Web Key Set' } },
  },
  {
    method: 'post',
    path: '/svc/authserver/oauth/token',
    summary:
      'Token endpoint: client_credentials, authorization_code (PKCE S256), refresh_token (rotated); client authentication HTTP Basic, client_secret_post, or none for public clients',
    tag: 'authorization server',
    auth: { kind: 'none' },
    requestSchema: 'auth-server.token-form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'Tokens', schema: 'auth-server.token.json' },
      '400': {
        description:
          'invalid_request, invalid_grant (code or refresh token unknown, expired, used, or PKCE mismatch), invalid_scope, invalid_target, unauthorized_client (a grant type the client is not registered for, such as client_credentials for a public client), unsupported_grant_type (RFC 6749 5.2)',
        schema: 'auth-server.token-error.json',
      },
      '401': { description: 'invalid_client', schema: 'auth-server.token-error.json' },
      '429': { description: LIMITED, schema: 'auth-server.token-error.json' },
      '503': { description: OUTAGE, schema: 'auth-server.token-error.json' },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/oauth/authorize',
    summary: 'Authorization endpoint (authorization code flow): leads to the sign-in pages, then back to redirect_uri with a code',
    tag: 'authorization server',
    auth: { kind: 'none' },
    query: [
      { name: 'client_id', description: 'The client id issued at registration', schema: { type: 'string' }, required: true },
      { name: 'response_type', description: 'code', schema: { type: 'string', enum: ['code'] }, required: true },
      {
        name: 'scope',
        description: 'Space-separated: notifications (user API), openid (an ID token), offline_access (a refresh token)',
        schema: { type: 'string', examples: ['openid notifications'] },
        required: true,
      },
      {
        name: 'redirect_uri',
        description: "Exactly one of the client's registered redirect URIs (a native app's loopback ones on any port)",
        schema: { type: 'string' },
        required: true,
      },
      { name: 'state', description: 'Echoed back to redirect_uri', schema: { type: 'string' } },
      {
        name: 'code_challenge',
        description: 'PKCE (RFC 7636): base64url of the SHA-256 of the code_verifier; required of public clients',
        schema: { type: 'string' },
      },
      { name: 'code_challenge_method', description: 'S256 (plain is refused)', schema: { type: 'string', enum: ['S256'] } },
      {
        name: 'prompt',
        description: 'OpenID Connect: none (no page: login_required when nobody is signed in), login (ask again), consent',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '303': {
        description:
          'To the sign-in page, or back to redirect_uri with code, state and iss; errors go back to redirect_uri with error, error_description and state',
      },
      '400': {
        description:
          'Unknown client or a redirect_uri not registered exactly (HTML page, never a redirect); also a request the browser says is not a page of its own (Sec-Fetch-Dest other than document, a silent prompt=none frame excepted, or a prefetch: plain text)',
        contentType: PAGE_OR_REFUSAL,
      },
      '429': {
        description: 'Too many sign-ins started or sign-in pages loaded from this address (HTML page, Retry-After)',
        contentType: 'text/html',
      },
      '503': {
        description: 'The store cannot be reached: an HTML page saying to try again shortly, with Retry-After',
        contentType: 'text/html',
      },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/oauth/authorize/{uid}',
    summary: 'Resumes the authorization request once a sign-in page is done (reached by redirect from the pages)',
    tag: 'authorization server',
    auth: { kind: 'none' },
    responses: {
      '303': { description: 'To the next sign-in page, or back to redirect_uri' },
      '400': {
        description:
          'Expired or foreign sign-in (HTML page); also a request the browser says is not a page of its own (Sec-Fetch-Dest other than document, or a prefetch: plain text)',
        contentType: PAGE_OR_REFUSAL,
      },
      '429': {
        description: 'Too many sign-ins started or sign-in pages loaded from this address (HTML page, Retry-After)',
        contentType: 'text/html',
      },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/interaction/{uid}',
    summary: 'Sign-in page: the user id form, the code form, or the consent page of a third-party client (HTML)',
    tag: 'sign-in pages',
    auth: { kind: 'none' },
    responses: {
      '200': { description: 'The page', contentType: 'text/html' },
      '303': { description: 'First-party client at the consent step: straight on, no page' },
      '400': {
        description:
          'Sign-in expired or started in another browser (HTML page); also a request the browser says is not a page of its own (Sec-Fetch-Dest other than document, or a prefetch: plain text)',
        contentType: PAGE_OR_REFUSAL,
      },
      '429': {
        description: 'Too many sign-ins started or sign-in pages loaded from this address (HTML page, Retry-After)',
        contentType: 'text/html',
      },
    },
  },
  {
    method: 'post',
    path: '/svc/authserver/interaction/{uid}',
    summary: "A sign-in form posted back to its page (user id, code, send a new code, use another account, consent, a passkey's answer)",
    tag: 'sign-in pages',
    auth: { kind: 'none' },
    requestSchema: 'sign-in.form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'The code page again, saying a new code was sent', contentType: 'text/html' },
      '303': {
        description: 'To the next page (code form after the user id), or on to the app after the right code, a verified passkey or consent',
      },
      '400': {
        description:
          "The page again with the error: malformed user id or code, wrong code (attempts left), no attempts left, code expired; a passkey answer that is malformed, answers no current challenge, does not verify, or is not registered in the app's enterprise; also a post the browser says is not a page of its own (Sec-Fetch-Dest other than document, or a prefetch: plain text)",
        contentType: PAGE_OR_REFUSAL,
      },
      '403': {
        description: 'CSRF token missing or wrong; account not active yet; account cannot sign in (HTML page)',
        contentType: 'text/html',
      },
      '413': { description: 'Form body above 80 kB', schema: 'common.error.json' },
      '429': {
        description:
          'Too many forms from this address (counted also when the CSRF token is stale) or too many attempts for this user id (HTML page, Retry-After)',
        contentType: 'text/html',
      },
    },
  },
  {
    method: 'post',
    path: '/svc/authserver/oauth/introspect',
    summary:
      'Token introspection (RFC 7662), for confidential clients and their own tokens: user tokens and enterprise (client_credentials) JWTs',
    tag: 'authorization server',
    auth: { kind: 'none' },
    requestSchema: 'auth-server.token-hint-form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'Token state', schema: 'auth-server.introspection.json' },
      '400': { description: 'invalid_request', schema: 'auth-server.token-error.json' },
      '401': { description: 'invalid_client', schema: 'auth-server.token-error.json' },
      '429': { description: LIMITED, schema: 'auth-server.token-error.json' },
      '503': {
        description: `${OUTAGE}, or an enterprise token names a key this process has not read and the stored keys cannot be read now`,
        schema: 'auth-server.token-error.json',
      },
    },
  },
  {
    method: 'post',
    path: '/svc/authserver/oauth/revoke',
    summary:
      'Token revocation (RFC 7009): every client for its own tokens (public clients with client_id alone); revoking a user token ends the whole sign-in; a revoked enterprise JWT is refused by the API until it would have expired',
    tag: 'authorization server',
    auth: { kind: 'none' },
    requestSchema: 'auth-server.token-hint-form.json',
    requestContentType: 'application/x-www-form-urlencoded',
    responses: {
      '200': { description: 'Revoked (also for an unknown token, RFC 7009 2.2)' },
      '400': {
        description: "invalid_request (another client's token)",
        schema: 'auth-server.token-error.json',
      },
      '401': { description: 'invalid_client', schema: 'auth-server.token-error.json' },
      '429': { description: LIMITED, schema: 'auth-server.token-error.json' },
      '503': {
        description: `${OUTAGE}, or an enterprise token names a key this process has not read and the stored keys cannot be read now`,
        schema: 'auth-server.token-error.json',
      },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/userinfo',
    summary: 'UserInfo (OpenID Connect Core 5.3): the sub of the user behind a user token granted openid',
    tag: 'authorization server',
    auth: { kind: 'user', scope: 'openid' },
    responses: {
      '200': { description: 'The claims', schema: 'auth-server.userinfo.json' },
      '401': { description: 'Missing header, or a token that is not a valid user token', schema: 'common.bearer-error.json' },
      '403': { description: 'insufficient_scope (no openid), or user_blocked (with code 141)', schema: 'common.bearer-error.json' },
    },
  },
  {
    method: 'post',
    path: '/svc/authserver/userinfo',
    summary: 'UserInfo, as POST (the token in the Authorization header)',
    tag: 'authorization server',
    auth: { kind: 'user', scope: 'openid' },
    responses: {
      '200': { description: 'The claims', schema: 'auth-server.userinfo.json' },
      '401': { description: 'Missing header, or a token that is not a valid user token', schema: 'common.bearer-error.json' },
      '403': { description: 'insufficient_scope (no openid), or user_blocked (with code 141)', schema: 'common.bearer-error.json' },
    },
  },
  {
    method: 'get',
    path: '/svc/authserver/session/end',
    summary:
      "Sign-out (OpenID Connect RP-Initiated Logout 1.0): a page asking to sign out, whose form ends the browser session and every grant made in it, then returns to post_logout_redirect_uri (one of the client's registered redirect URIs, exactly) with state",
    tag: 'authorization server',
    auth: { kind: 'none' },
    query: [
      { name: 'client_id', description: 'The app signing the user out', schema: { type: 'string' } },
      { name: 'id_token_hint', description: 'An ID token the app received (names the app)', schema: { type: 'string' } },
      {
        name: 'post_logout_redirect_uri',
        description: "Where to return: one of the app's registered redirect URIs",
        schema: { type: 'string' },
      },
      { name: 'state', description: 'Returned with the user', schema: { type: 'string' } },
    ],
    responses: {
      '200': { description: 'The sign-out page (HTML), or a form that posts itself when nobody is signed in', contentType: 'text/html' },
      '400': {
        description:
          'Unknown client, an id_token_hint that does not verify, or a post_logout_redirect_uri not registered (JSON, or an HTML page for browsers); also a request the browser says is not a page of its own (Sec-Fetch-Dest other than document, or a prefetch: plain text)',
        schema: 'auth-server.token-error.json',
        contentType: ['application/json', ...PAGE_OR_REFUSAL],
      },
      '429': {
        description: 'Too many sign-ins started or sign-in or sign-out pages loaded from this address (HTML page, Retry-After)',
        contentType: 'text/html',
      },
    },
  },
];
