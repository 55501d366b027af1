import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';

const basic = (token: string) => `Basic ${Buffer.from(`ops:${token}`).toString('base64')}`;

describe('security headers on every answer, and a queue dashboard that refuses cross-site actions', () => {
  let service: TestService;
  let admin: string;
  beforeAll(async () => {
    service = await startTestService('secheaders');
    admin = service.config.adminToken as string;
  });
  afterAll(async () => {
    await service.close();
  });

  function expectHelmetHeaders(res: Response, cspParts: string[]): void {
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-powered-by')).toBeNull();
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    for (const part of cspParts) expect(csp).toContain(part);
  }

  test.each([
    ['GET', '/healthz', 200],
    ['GET', '/openapi.json', 200],
    ['GET', '/v1/svc-otp/0e6f1a4e-8f5c-4d0f-9d7e-2f1f0e5a9b11', 401],
    ['POST', '/admin/clients', 401],
    ['GET', '/nowhere', 404],
    ['GET', '/svc/authserver/jwks', 200],
  ])(
    'when %s %s is answered (%i), then it carries nosniff, DENY framing, no-referrer, a CSP that allows nothing, and no X-Powered-By',
    async (method, path, status) => {
      const res = await fetch(`${service.url}${path}`, { method });
      expect(res.status).toBe(status);
      expectHelmetHeaders(res, path.startsWith('/svc/') ? ["default-src 'self'"] : ["default-src 'none'"]);
      expect(res.headers.get('cache-control')).toBe('no-store');
    },
  );

  test('when the docs page and its assets are served, then the CSP lets Swagger UI run from this origin only and assets may be cached', async () => {
    const page = await fetch(`${service.url}/docs`);
    expectHelmetHeaders(page, ["script-src 'self'", "connect-src 'self'", "img-src 'self' data:"]);
    const asset = await fetch(`${service.url}/docs/assets/swagger-ui.css`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=3600');
    expectHelmetHeaders(asset, ["script-src 'self'"]);
  });

  test('when the dashboard answers (asking for credentials, then its page and its API), then none of its answers names the framework', async () => {
    expectHelmetHeaders(await fetch(`${service.url}/admin/queues`), ["script-src 'self'"]);
    const page = await fetch(`${service.url}/admin/queues`, { headers: { authorization: basic(admin) } });
    expect(page.status).toBe(200);
    expectHelmetHeaders(page, ["script-src 'self'", "connect-src 'self'"]);
    const api = await fetch(`${service.url}/admin/queues/api/queues?activeQueue=dispatch`, { headers: { authorization: basic(admin) } });
    expect(api.status).toBe(200);
    expectHelmetHeaders(api, ["script-src 'self'"]);
  });

  test('when an answer carries a client secret or an access token, then it may not be stored by any cache', async () => {
    const created = await fetch(`${service.url}/admin/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cache probe', scopes: ['otp'], allowedIps: [] }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { client_id: clientId, client_secret: clientSecret } = (await created.json()) as { client_id: string; client_secret: string };
    const token = await requestToken(service, { clientId, clientSecret });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expectHelmetHeaders(token, ["default-src 'self'"]);
  });

  describe('queue dashboard actions', () => {
    const addProbe = (
      name: string,
      headers: Record<string, string>,
      body = JSON.stringify({ name, data: {}, options: { delay: 600000 } }),
    ) => fetch(`${service.url}/admin/queues/api/queues/dispatch/add`, { method: 'POST', headers, body });
    const probesNamed = async (name: string) =>
      (await service.ctx.queues.dispatch.getJobs(['delayed', 'waiting'])).filter((job) => job.name === name).length;

    test.each([
      [
        'a cross-site text/plain form POST (Fetch Metadata)',
        { 'content-type': 'text/plain', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      ],
      [
        'a same-site but other-origin POST',
        { 'content-type': 'application/json', origin: 'http://sub.example', 'sec-fetch-site': 'same-site' },
      ],
      ['a POST from a foreign Origin without Fetch Metadata', { 'content-type': 'text/plain', origin: 'http://evil.example' }],
      ['a POST with Basic credentials and no origin information', { 'content-type': 'text/plain' }],
    ])('when %s arrives with the browser-held Basic credentials, then it is refused 403 and no job is added', async (_label, headers) => {
      const name = `csrf-${Math.random().toString(36).slice(2)}`;
      const res = await addProbe(name, { authorization: basic(admin), ...headers });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        timestamp: expect.any(String),
        status: 403,
        error: 'Forbidden',
        message: 'Cross-site request refused',
        path: '/admin/queues/api/queues/dispatch/add',
      });
      expect(await probesNamed(name)).toBe(0);
    });

    test('when the dashboard page itself adds a job (same origin), or a program does with the Bearer token, then the job is added', async () => {
      const fromPage = await addProbe('csrf-same-origin', {
        authorization: basic(admin),
        'content-type': 'application/json',
        origin: service.url,
        'sec-fetch-site': 'same-origin',
      });
      expect(fromPage.status).toBe(200);
      const fromOldBrowser = await addProbe('csrf-origin-only', {
        authorization: basic(admin),
        'content-type': 'application/json',
        origin: service.url,
      });
      expect(fromOldBrowser.status).toBe(200);
      const fromProgram = await addProbe('csrf-bearer', { authorization: `Bearer ${admin}`, 'content-type': 'application/json' });
      expect(fromProgram.status).toBe(200);
      expect([await probesNamed('csrf-same-origin'), await probesNamed('csrf-origin-only'), await probesNamed('csrf-bearer')]).toEqual([
        1, 1, 1,
      ]);
    });
  });

  test('when a users route answers, then it carries the same headers', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'] });
    const res = await fetch(`${service.url}/v1/users/nobody`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(res.status).toBe(404);
    expectHelmetHeaders(res, ["default-src 'none'"]);
  });
});
