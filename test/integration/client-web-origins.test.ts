import { registerClient } from '../../core/clients/clients.service.js';
import { mintUserToken } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;
const SPA = 'https://spa.example';
const LISTED = 'https://listed.example';
const BANK = 'https://bank.example';

/** CORS for apps in other pages: /v1/me* and the token endpoint answer only the web origins of public clients. */
describe('web origins of clients (CORS)', () => {
  let service: TestService;
  let spaClientId: string;
  let bankClientId: string;
  let userToken: string;

  beforeAll(async () => {
    service = await startTestService('web-origins');
    const created = await admin('POST', '/admin/clients', {
      name: 'Single-page app',
      scopes: [],
      public: true,
      redirectUris: [`${SPA}/callback`, 'http://127.0.0.1/callback'],
      webOrigins: [`${LISTED}/`],
    });
    expect(created.status).toBe(201);
    spaClientId = ((await created.json()) as { client_id: string }).client_id;
    bankClientId = (await registerClient(service.services.clients, { name: 'Bank', scopes: ['otp'], redirectUris: [`${BANK}/callback`] }))
      .client.clientId;
    await insertUser(service.ctx.mongo, { userId: 'cora', mobileNumber: '+15550500001' });
    userToken = await mintUserToken(service, { userId: 'cora', clientId: spaClientId });
  });
  afterAll(async () => {
    await service.close();
  });

  function admin(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** A browser's preflight for a call with the user's token. */
  function preflight(origin: string, path = '/v1/me', method = 'GET'): Promise<Response> {
    return fetch(`${service.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
    });
  }

  const corsHeaders = (res: Response) =>
    Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'));

  test.each([
    ['the origin of its https redirect URI', SPA, '/v1/me', 'GET'],
    ['an origin from its webOrigins list', LISTED, '/v1/me/notifications', 'GET'],
    [
      'the origin of its https redirect URI, answering a notification',
      SPA,
      '/v1/me/notifications/0b0e8e8e-0000-4000-8000-000000000000/action',
      'POST',
    ],
  ])(
    'when a public client’s page preflights from %s, then 204 allowing that origin only, the token header, no credentials',
    async (_l, origin, path, method) => {
      const res = await preflight(origin, path, method);
      expect(res.status).toBe(204);
      expect(corsHeaders(res)).toEqual({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': 'Authorization, Content-Type, Accept',
        'access-control-max-age': '600',
        'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
        vary: 'Origin',
      });
    },
  );

  test('when the allowed page then calls /v1/me with the user token, then the answer carries its origin and the user', async () => {
    const res = await fetch(`${service.url}/v1/me`, { headers: { origin: SPA, authorization: `Bearer ${userToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(SPA);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(await res.json()).toMatchObject({ userId: 'cora' });
  });

  test.each([
    ['another site', 'https://evil.example'],
    ['a confidential client’s redirect URI origin', BANK],
    ['a public client’s plain-http redirect URI origin', 'http://127.0.0.1'],
    ['the allowed host over http', 'http://spa.example'],
    ['a sandboxed page (null)', 'null'],
  ])('when %s preflights /v1/me, then 403 with no CORS headers, so the browser never sends the call', async (_label, origin) => {
    const res = await preflight(origin);
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(await res.json()).toEqual({
      timestamp: expect.stringMatching(D1_TIMESTAMP),
      status: 403,
      error: 'Forbidden',
      message: `Origin ${origin} may not call /v1/me from a browser`,
      path: '/v1/me',
    });
  });

  test('when another origin sends a call anyway, then it is served without CORS headers (the browser hides the answer)', async () => {
    const res = await fetch(`${service.url}/v1/me`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${userToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toBe('Origin');
  });

  test('when an admin adds a web origin with PATCH, then it is shown, recorded, and allowed at once; removing it refuses it again', async () => {
    const added = await admin('PATCH', `/admin/clients/${spaClientId}`, {
      webOrigins: [LISTED, 'http://localhost:5173'],
      comments: 'dev server',
    });
    expect(added.status).toBe(200);
    expect(await added.json()).toMatchObject({
      client_id: spaClientId,
      redirectUris: [`${SPA}/callback`, 'http://127.0.0.1/callback'],
      webOrigins: [LISTED, 'http://localhost:5173'],
    });
    expect((await preflight('http://localhost:5173')).status).toBe(204);
    const activity = (await (await admin('GET', `/admin/activity?limit=5`)).json()) as { activity: Record<string, unknown>[] };
    expect(activity.activity[0]).toMatchObject({ action: 'client.updated', clientId: spaClientId, comments: 'dev server' });

    expect((await admin('PATCH', `/admin/clients/${spaClientId}`, { webOrigins: [LISTED] })).status).toBe(200);
    expect((await preflight('http://localhost:5173')).status).toBe(403);
  });

  test.each([
    [
      'a path',
      'https://app.example/page',
      "Invalid field webOrigins: 'https://app.example/page' is not an origin (scheme, host and port only)",
    ],
    [
      'plain http off loopback',
      'http://app.example',
      "Invalid field webOrigins: 'http://app.example' uses http off loopback; pages of other origins must be https",
    ],
    ['a wildcard', 'https://*.example.com', "Invalid field webOrigins: 'https://*.example.com' must name one host (no wildcards)"],
    ['not a URL', 'spa.example', "Invalid field webOrigins: 'spa.example' is not an http(s) origin"],
  ])('when a web origin has %s, then 422 naming it', async (_label, origin, message) => {
    const res = await admin('PATCH', `/admin/clients/${spaClientId}`, { webOrigins: [origin] });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ status: 422, message, path: `/admin/clients/${spaClientId}` });
  });

  test('when web origins are given to a confidential client, or a client is unknown, then 422 and 404', async () => {
    const confidential = await admin('PATCH', `/admin/clients/${bankClientId}`, { webOrigins: [BANK] });
    expect(confidential.status).toBe(422);
    expect(await confidential.json()).toMatchObject({
      message: 'Invalid field webOrigins: only public clients have web origins (a client secret does not belong in a page)',
    });
    const unknown = await admin('PATCH', '/admin/clients/nobody', { webOrigins: [] });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ message: 'Client not found' });
  });

  describe('the token endpoint follows the same rule', () => {
    function tokenCall(origin: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
      return fetch(`${service.url}/svc/authserver/oauth/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    }

    test('when a public client’s page calls it from its web origin, then the answer is readable there', async () => {
      const res = await tokenCall(LISTED, { grant_type: 'refresh_token', client_id: spaClientId, refresh_token: 'not-a-token' });
      expect(res.status).toBe(400);
      expect(res.headers.get('access-control-allow-origin')).toBe(LISTED);
      expect(await res.json()).toMatchObject({ error: 'invalid_grant' });
    });

    test.each([
      ['a public client from another origin', 'https://evil.example', () => spaClientId],
      ['a public client from its plain-http redirect URI origin', 'http://127.0.0.1', () => spaClientId],
    ])('when %s calls it, then invalid_request naming the origin, and no CORS header', async (_label, origin, clientId) => {
      const res = await tokenCall(origin, { grant_type: 'refresh_token', client_id: clientId(), refresh_token: 'not-a-token' });
      expect(res.status).toBe(400);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.json()).toEqual({
        error: 'invalid_request',
        error_description: `origin ${origin} not allowed for client: ${clientId()}`,
      });
    });

    test('when a confidential client is called from its own redirect URI origin, then it is refused (its secret has no place in a page)', async () => {
      const res = await tokenCall(BANK, { grant_type: 'client_credentials', client_id: bankClientId, client_secret: 'whatever' });
      expect(res.status).toBe(400);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});
