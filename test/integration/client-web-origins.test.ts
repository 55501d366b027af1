import { randomUUID } from 'node:crypto';
import { NotificationClient, Passkeys } from '@svc-identity/client';
import { registerClient } from '../../core/clients/clients.service.js';
import { appendUserEvent } from '../../core/notifications/notification-user-events.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { mintUserToken } from '../support/notification-helpers.js';
import { eventually } from '../support/waiting.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';

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
    return adminRequest(service, method, path, body);
  }

  /** A browser's preflight for a call with the user's token (`headers`: the names it will send, as the browser lists them). */
  function preflight(origin: string, path = '/v1/me', method = 'GET', headers = 'authorization,content-type'): Promise<Response> {
    return fetch(`${service.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });
  }

  /** The request headers a preflight's answer allows, lower-cased as browsers compare them. */
  const allowedHeaders = (res: Response) =>
    (res.headers.get('access-control-allow-headers') ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);

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
        'access-control-allow-headers': 'Authorization, Content-Type, Accept, Last-Event-ID',
        'access-control-max-age': '600',
        'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
        vary: 'Origin',
      });
    },
  );

  test('when a public client’s page preflights the notification stream resumed after a break (Last-Event-ID), then 204 allowing that header', async () => {
    const res = await preflight(SPA, '/v1/me/notifications/stream', 'GET', 'accept,authorization,last-event-id');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(SPA);
    expect(allowedHeaders(res)).toEqual(expect.arrayContaining(['accept', 'authorization', 'last-event-id']));
  });

  test('when the client library makes each of its /v1/me calls and resumes its stream after a break, then each call’s preflight allows every header it sent', async () => {
    const sent = new Map<string, { method: string; path: string; headers: string[] }>();
    let streamsOpened = 0;
    // The library's fetch: notes what each request sends; the first stream ends after its first
    // event, as a network break would, so the library reconnects with Last-Event-ID.
    const recordingFetch: typeof fetch = async (input, init) => {
      const method = init?.method ?? 'GET';
      const path = new URL(String(input)).pathname;
      const headers = [...new Headers(init?.headers).keys()].sort();
      sent.set(`${method} ${path} ${headers.join(',')}`, { method, path, headers });
      const res = await fetch(input, init);
      if (!path.endsWith('/stream')) return res;
      streamsOpened += 1;
      return streamsOpened === 1 ? endingAfterFirstEvent(res) : res;
    };
    const client = new NotificationClient({ serviceUrl: service.url, getAccessToken: () => userToken, fetch: recordingFetch });
    await client.getNotifications(0, '', 1, '', '');
    await client.getNotificationHistory(0, '', 1, '', '', '', '', '', '');
    const unknownUuid = randomUUID();
    await client.updateNotification(unknownUuid, 'accept').catch(() => undefined); // 404, but sent as any answer is
    await client.getPushKey();
    await client.registerPushSubscription({ endpoint: 'https://push.example/x', keys: { p256dh: 'x', auth: 'y' } }).catch(() => undefined);
    await client.unregisterPushSubscription('https://push.example/x');
    await new Passkeys({ serviceUrl: service.url, getAccessToken: () => userToken, fetch: recordingFetch }).list();

    const watch = client.watchNotifications();
    try {
      // The library has the stream's head: the service listens, and starts after the newest event then.
      await eventually(async () => (streamsOpened === 1 ? true : undefined));
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, DEFAULT_ENTERPRISE_ID, 'cora', {
        type: 'created',
        notification_uuid: randomUUID(),
        status: 'ACTIVE',
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      });
      await eventually(async () => ([...sent.values()].some((r) => r.headers.includes('last-event-id')) ? true : undefined));
    } finally {
      watch.stop();
    }

    expect(new Set([...sent.values()].map(({ method, path }) => `${method} ${path}`))).toEqual(
      new Set([
        'GET /v1/me/notifications',
        'GET /v1/me/notifications/history',
        `POST /v1/me/notifications/${unknownUuid}/action`,
        'GET /v1/me/push-key',
        'POST /v1/me/push-subscriptions',
        'GET /v1/me/push-subscriptions',
        'GET /v1/me/passkeys',
        'GET /v1/me/notifications/stream',
      ]),
    );
    const refused: string[] = [];
    for (const { method, path, headers } of sent.values()) {
      const res = await preflight(SPA, path, method, headers.join(','));
      const allowed = allowedHeaders(res);
      const missing = headers.filter((name) => !allowed.includes(name));
      if (res.status !== 204 || missing.length > 0) refused.push(`${method} ${path}: ${res.status}, not allowed: ${missing.join(', ')}`);
    }
    expect(refused).toEqual([]);
  }, 30000);

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
      code: 39,
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

/** The answer of a stream cut right after its first event (a break: the reader sees the body end). */
function endingAfterFirstEvent(res: Response): Response {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      text += decoder.decode(value, { stream: true });
      if (/(^|\n)id: [^\n]*\n([^\n]+\n)*\n/.test(text)) {
        controller.close();
        await reader.cancel();
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}
