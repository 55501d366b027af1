import { createHash, randomBytes } from 'node:crypto';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';

const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;
const SCHEME_REDIRECT = 'com.example.app:/oauth/callback';

/** Native apps (RFC 8252): private-use scheme and loopback redirect URIs, through the real authorize and token endpoints. */
describe('native apps: redirect URIs', () => {
  let service: TestService;
  let worker: RunningWorker;
  let nativeClientId: string;
  let confidentialLoopback: string;

  beforeAll(async () => {
    service = await startTestService('native-apps', {}, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    const created = await admin('POST', '/admin/clients', {
      name: 'Phone app',
      scopes: [],
      public: true,
      redirectUris: [SCHEME_REDIRECT, 'http://127.0.0.1/callback', 'http://[::1]/callback'],
    });
    expect(created.status).toBe(201);
    nativeClientId = ((await created.json()) as { client_id: string }).client_id;
    confidentialLoopback = (
      await registerClient(service.services.clients, { name: 'Local server app', scopes: [], redirectUris: ['http://127.0.0.1/callback'] })
    ).client.clientId;
    await insertUser(service.ctx.mongo, { userId: 'nadia', mobileNumber: '+15550400001' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  function admin(method: string, path: string, body: unknown): Promise<Response> {
    return adminRequest(service, method, path, body);
  }

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };

  function authorizeUrl(clientId: string, redirectUri: string, challenge: string): string {
    const params = {
      client_id: clientId,
      response_type: 'code',
      scope: 'openid notifications',
      redirect_uri: redirectUri,
      state: 'st-native',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    return `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams(params).toString()}`;
  }

  /** Signs nadia in for the native app and redeems the code, as the app would with this redirect URI. */
  async function signInAndRedeem(redirectUri: string): Promise<{ callback: URL; tokenStatus: number; token: Record<string, unknown> }> {
    const { verifier, challenge } = pkce();
    const walker = new FormWalker(service.url);
    const callback = new URL(
      await signInWithForms(service, walker, authorizeUrl(nativeClientId, redirectUri, challenge), 'nadia', '+15550400001'),
    );
    const res = await fetch(`${service.url}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: nativeClientId,
        code: callback.searchParams.get('code') ?? '',
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }).toString(),
    });
    return { callback, tokenStatus: res.status, token: (await res.json()) as Record<string, unknown> };
  }

  test('when a native app signs in with its private-use scheme, then the code comes back to that scheme and redeems for tokens', async () => {
    const { callback, tokenStatus, token } = await signInAndRedeem(SCHEME_REDIRECT);
    expect(`${callback.protocol}${callback.pathname}`).toBe(SCHEME_REDIRECT);
    expect(callback.searchParams.get('state')).toBe('st-native');
    expect(tokenStatus).toBe(200);
    expect(token).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });
  });

  test.each([
    ['IPv4', 'http://127.0.0.1:53123/callback'],
    ['IPv6', 'http://[::1]:8400/callback'],
  ])(
    'when a native app listens on a %s loopback port it was given, then that port matches the registered loopback redirect URI',
    async (_kind, redirectUri) => {
      const { callback, tokenStatus } = await signInAndRedeem(redirectUri);
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
      expect(callback.searchParams.get('code')).toEqual(expect.any(String));
      expect(tokenStatus).toBe(200);
    },
  );

  test.each([
    ['a native app, a loopback URI with another path', () => nativeClientId, 'http://127.0.0.1:53123/other'],
    ['a native app, a loopback host it did not register (localhost)', () => nativeClientId, 'http://localhost:53123/callback'],
    ['a native app, another private-use scheme', () => nativeClientId, 'com.example.evil:/oauth/callback'],
    ['a server-side app, its loopback URI on another port', () => confidentialLoopback, 'http://127.0.0.1:53123/callback'],
  ])('when the request has %s, then the 400 sign-in error page and no redirect', async (_label, clientId, redirectUri) => {
    const res = await fetch(authorizeUrl(clientId(), redirectUri, pkce().challenge), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('has not registered');
  });

  test('when a server-side app signs in to a plain-http redirect URI off loopback, then PKCE is required; over https it stays optional', async () => {
    // A code sent over plain http can be read on the way; PKCE binds it to the browser that asked.
    const internal = 'http://app.internal.example/cb';
    const { client } = await registerClient(service.services.clients, {
      name: 'Internal app',
      scopes: [],
      redirectUris: [internal, 'https://app.example/cb'],
    });
    const withoutPkce = (redirectUri: string) =>
      `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({
        client_id: client.clientId,
        response_type: 'code',
        scope: 'openid notifications',
        redirect_uri: redirectUri,
        state: 'st-http',
      }).toString()}`;
    const refused = await fetch(withoutPkce(internal), { redirect: 'manual' });
    expect(refused.status).toBe(303);
    const location = new URL(refused.headers.get('location') ?? '', service.url);
    expect(`${location.origin}${location.pathname}`).toBe(internal);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(location.searchParams.has('code')).toBe(false);

    const withPkce = await fetch(authorizeUrl(client.clientId, internal, pkce().challenge), { redirect: 'manual' });
    expect(withPkce.headers.get('location')).toContain('/svc/authserver/interaction/');
    const overHttps = await fetch(withoutPkce('https://app.example/cb'), { redirect: 'manual' });
    expect(overHttps.headers.get('location')).toContain('/svc/authserver/interaction/');
  });

  test.each([
    [
      'a confidential client with a private-use scheme',
      { public: false, redirectUris: ['com.example.app:/cb'] },
      "Invalid field redirectUris: 'com.example.app:/cb' uses a private-use scheme, which only public clients (native apps) may register",
    ],
    [
      'a scheme that is not a reverse domain name',
      { public: true, redirectUris: ['myapp:/cb'] },
      "Invalid field redirectUris: 'myapp:/cb' uses a scheme that is neither http(s) nor a reverse domain name (e.g. com.example.app:/callback)",
    ],
    [
      'a javascript: URI',
      { public: true, redirectUris: ['javascript:alert(1)'] },
      "Invalid field redirectUris: 'javascript:alert(1)' uses a scheme that is neither http(s) nor a reverse domain name (e.g. com.example.app:/callback)",
    ],
    [
      'a native app with plain http off loopback',
      { public: true, redirectUris: ['com.example.app:/cb', 'http://dev.example/cb'] },
      "Invalid field redirectUris: 'http://dev.example/cb' is plain http off loopback, which a native app (a client with a private-use scheme) may not use",
    ],
    [
      'a wildcard host (matching is exact, so it would never match)',
      { public: false, redirectUris: ['https://*.example.com/cb'] },
      "Invalid field redirectUris: 'https://*.example.com/cb' must name one host (no wildcards: redirect URIs match exactly)",
    ],
  ])('when an admin registers %s, then 422 naming the URI and the rule', async (_label, fields, message) => {
    const res = await admin('POST', '/admin/clients', { name: 'app', scopes: [], ...fields });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      timestamp: expect.stringMatching(D1_TIMESTAMP),
      status: 422,
      error: 'Invalid data.',
      message,
      path: '/admin/clients',
    });
  });
});
