import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { buildApp } from '../../api/app.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { listAppRoutes } from '../support/list-app-routes.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

describe('OpenAPI document and docs page', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('openapi');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the app serves a route, then the OpenAPI document lists it', async () => {
    const res = await fetch(`${service.url}/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toBe('3.1.0');
    const served = listAppRoutes(buildApp(service.ctx)).filter((r) => !r.path.startsWith('/docs/') && !r.path.startsWith('/admin/queues/'));
    expect(served.length).toBeGreaterThan(3);
    const undocumented = served.filter((r) => document.paths[r.path]?.[r.method] === undefined);
    expect(undocumented).toEqual([]);
  });

  test('when a schema references another, then the reference points into components', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { components: { schemas: Record<string, unknown> } };
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"\$ref":"[^#]/);
    expect(document.components.schemas['common.error']).toMatchObject({ type: 'object' });
  });

  test('when an operator endpoint answers JSON, then the document names its schema and the body matches it', async () => {
    type Answer = { content?: Record<string, { schema: { $ref?: string } }> };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { responses: Record<string, Answer> } }>;
    };
    for (const path of ['/', '/healthz', '/readyz']) {
      const res = await fetch(`${service.url}${path}`, { headers: { accept: 'application/json' } });
      const ref = document.paths[path]?.get.responses[String(res.status)]?.content?.['application/json']?.schema.$ref;
      expect([path, res.status, typeof ref]).toEqual([path, 200, 'string']);
      const validate = getValidator(`${String(ref).replace('#/components/schemas/', '')}.json`);
      expect([path, validate(await res.json()), validate.errors ?? null]).toEqual([path, true, null]);
    }
  });

  test('when a limited route answers with budget or replay header fields, then the document declares each for that answer', async () => {
    // A client generated from the document learns of RateLimit, RateLimit-Policy, Retry-After
    // and Idempotent-Replayed only where the document names them.
    type Operation = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const { accessToken } = await createClientWithToken(service, { scopes: ['otp', 'notifications'] });
    const userId = uniqueName('limits');
    await insertUser(service.ctx.mongo, { userId, mobileNumber: '+15550123987' });
    const undeclared: string[] = [];
    async function call(method: string, path: string, documented: string, body?: unknown, headers: Record<string, string> = {}) {
      const res = await fetch(`${service.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${accessToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const declared = Object.keys(document.paths[documented]?.[method.toLowerCase()]?.responses[String(res.status)]?.headers ?? {});
      for (const name of ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed'])
        if (res.headers.has(name) && !declared.includes(name)) undeclared.push(`${method} ${documented} ${res.status} ${name}`);
      return res;
    }
    const otp = { userId, dispatchOptions: { SMS: 'otp_sms' }, dynamicMacros: {}, attempts: 3, expiresIn: 300 };
    const first = (await (await call('POST', '/v1/svc-otp', '/v1/svc-otp', otp, { 'idempotency-key': 'k1' })).json()) as {
      otpUuid: string;
    };
    expect((await call('POST', '/v1/svc-otp', '/v1/svc-otp', otp, { 'idempotency-key': 'k1' })).headers.get('idempotent-replayed')).toBe(
      'true',
    );
    await call('POST', `/v1/svc-otp/${first.otpUuid}/resend`, '/v1/svc-otp/{otpUuid}/resend');
    await call('POST', `/v1/svc-otp/${first.otpUuid}/validate`, '/v1/svc-otp/{otpUuid}/validate', { otp: '0' });
    await call('POST', `/v1/svc-otp/${randomUUID()}/validate`, '/v1/svc-otp/{otpUuid}/validate', { otp: '0' });
    let last = 200;
    for (let i = 0; i < 6 && last !== 429; i += 1) last = (await call('POST', '/v1/svc-otp', '/v1/svc-otp', otp)).status;
    expect(last).toBe(429); // the person's budget of 5 per 10 minutes, spent
    expect((await call('POST', `/v1/svc-otp/${first.otpUuid}/resend`, '/v1/svc-otp/{otpUuid}/resend')).status).toBe(429);
    const notification = {
      userId,
      body: [{ lng: 'English', subject: 's', message: 'm' }],
      actions: [{ label: 'A', action: 'accept', authlevel: 1 }],
    };
    expect((await call('POST', '/v1/notifications', '/v1/notifications', notification)).status).toBe(201);
    expect((await call('POST', '/v1/notifications', '/v1/notifications', { ...notification, userId: 'nobody' })).status).toBe(404);
    expect(undeclared).toEqual([]);
  });

  test('when a route reads query parameters, then the document declares each of them', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const listParameters = ['recordCount', 'startIndex', 'enterpriseID', 'startDate', 'endDate'];
    const reads: [string, string, string[]][] = [
      ['get', '/v1/users', ['status', 'group', 'limit', 'cursor']],
      ['delete', '/v1/users/{userId}', ['comments']],
      ['get', '/v1/notifications/{uuid}', ['wait']],
      ['get', '/v1/me/notifications', listParameters],
      ['get', '/v1/me/notifications/history', [...listParameters, 'notificationStatus', 'actionPerformed', 'keywordSearch', 'deviceID']],
      ['put', '/admin/users/{userId}/blocked', ['enterpriseId']],
      ['post', '/admin/users/{userId}/activation', ['enterpriseId', 'comments']],
      ['delete', '/admin/users/{userId}/sign-in-lock', ['enterpriseId', 'comments']],
      ['get', '/admin/users/{userId}/passkeys', ['enterpriseId']],
      ['delete', '/admin/users/{userId}/passkeys/{passkeyId}', ['enterpriseId', 'comments']],
      [
        'get',
        '/svc/authserver/oauth/authorize',
        ['client_id', 'response_type', 'scope', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'prompt'],
      ],
    ];
    for (const [method, path, names] of reads) {
      const declared = (document.paths[path]?.[method]?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect([method, path, names.filter((name) => !declared.includes(name))]).toEqual([method, path, []]);
    }
  });

  test('when the docs page is opened, then it and its assets are served locally', async () => {
    const page = await fetch(`${service.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${service.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100000);
  });

  describe('methods the document does not list', () => {
    const errorBody = (method: string, path: string) => ({
      timestamp: expect.any(String),
      status: 405,
      error: 'Method Not Allowed',
      message: `Request method '${method}' is not supported`,
      path,
    });

    test.each([
      ['PUT', '/healthz', 'GET, HEAD'],
      ['POST', '/openapi.json', 'GET, HEAD'],
      ['DELETE', '/admin/clients', 'POST, GET, HEAD'],
      ['PATCH', '/svc/authserver/jwks', 'GET, HEAD'],
      ['GET', '/svc/authserver/oauth/token', 'POST'],
      ['PUT', '/v1/users/activate', 'POST'],
      ['POST', '/admin/queues', 'GET, HEAD'],
      ['DELETE', '/webhooks/twilio/status', 'POST'],
    ])('when %s %s arrives, then 405 with Allow: %s', async (method, path, allow) => {
      const res = await fetch(`${service.url}${path}`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(await res.json()).toEqual(errorBody(method, path));
    });

    test('when TRACE arrives (which fetch cannot send), then it is 405 too', async () => {
      const status = await new Promise<{ code?: number; allow?: string }>((resolve, reject) => {
        const req = request(`${service.url}/readyz`, { method: 'TRACE' }, (res) => {
          res.resume();
          resolve({ code: res.statusCode, allow: res.headers.allow });
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toEqual({ code: 405, allow: 'GET, HEAD' });
    });

    test('when an enterprise path gets an unlisted method, then authentication answers first, then 405', async () => {
      expect((await fetch(`${service.url}/v1/svc-otp`, { method: 'DELETE' })).status).toBe(401);
      const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
      const res = await fetch(`${service.url}/v1/svc-otp`, { method: 'DELETE', headers: { authorization: `Bearer ${accessToken}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    });

    test('when OPTIONS asks about a path, then 204 lists its methods, and /v1/users/activate is not taken for a user id', async () => {
      for (const [path, allow] of [
        ['/v1/users/activate', 'POST'],
        ['/v1/users/someone', 'GET, HEAD, PATCH, DELETE'],
        ['/v1/svc-otp/0e6f1a4e-8f5c-4d0f-9d7e-2f1f0e5a9b11', 'GET, HEAD, DELETE'],
      ]) {
        const res = await fetch(`${service.url}${path}`, { method: 'OPTIONS' });
        expect([path, res.status, res.headers.get('allow')]).toEqual([path, 204, allow]);
      }
    });
  });

  test('when the document is read, then no operation exists only to answer 405, lists are arrays, and every JSON body may get 413 and 415', async () => {
    type Operation = {
      requestBody?: { content: Record<string, unknown> };
      responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
    };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ id: `${method} ${path}`, op })),
    );
    expect(
      operations
        .filter(({ op }) => Object.keys(op.responses).every((status) => ['401', '403', '405'].includes(status)))
        .map(({ id }) => id),
    ).toEqual([]);
    for (const id of ['get /admin/outbox', 'get /admin/templates']) {
      const [method, path] = id.split(' ') as [string, string];
      expect(document.paths[path]?.[method]?.responses['200']?.content?.['application/json']?.schema).toMatchObject({ type: 'array' });
    }
    const jsonBodies = operations.filter(({ op }) => op.requestBody?.content['application/json'] !== undefined);
    expect(jsonBodies.length).toBeGreaterThan(6);
    expect(jsonBodies.filter(({ op }) => !op.responses['413'] || !op.responses['415']).map(({ id }) => id)).toEqual([]);
  });

  test("when a sign-in or sign-out page refuses a request, then the document declares the content type it answered with: an HTML page (or the provider's JSON) to a browser window, plain text to a request that is not a page of its own", async () => {
    type Operation = { responses: Record<string, { content?: Record<string, unknown> }> };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const asWindow = { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', accept: 'text/html' };
    const asImage = { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' };
    const calls: { method: 'get' | 'post'; documented: string; url: string; headers: Record<string, string> }[] = [];
    for (const headers of [asWindow, asImage, {}]) {
      calls.push(
        { method: 'get', documented: '/svc/authserver/oauth/authorize', url: '/svc/authserver/oauth/authorize?client_id=nobody', headers },
        { method: 'get', documented: '/svc/authserver/oauth/authorize/{uid}', url: '/svc/authserver/oauth/authorize/gone', headers },
        { method: 'get', documented: '/svc/authserver/interaction/{uid}', url: '/svc/authserver/interaction/gone', headers },
        { method: 'post', documented: '/svc/authserver/interaction/{uid}', url: '/svc/authserver/interaction/gone', headers },
        { method: 'get', documented: '/svc/authserver/session/end', url: '/svc/authserver/session/end?client_id=nobody', headers },
      );
    }
    const answers: string[] = [];
    const undeclared: string[] = [];
    for (const { method, documented, url, headers } of calls) {
      const res = await fetch(`${service.url}${url}`, {
        method: method.toUpperCase(),
        headers: method === 'post' ? { ...headers, 'content-type': 'application/x-www-form-urlencoded' } : headers,
        ...(method === 'post' ? { body: 'csrf=x&step=user&userId=x' } : {}),
        redirect: 'manual',
      });
      await res.arrayBuffer();
      const type = (res.headers.get('content-type') ?? '').split(';')[0] as string;
      answers.push(`${res.status} ${type}`);
      const declared = document.paths[documented]?.[method]?.responses[String(res.status)]?.content ?? {};
      if (!(type in declared))
        undeclared.push(
          `${method} ${url} ${JSON.stringify(headers)}: ${res.status} ${type}, declared ${Object.keys(declared).join(', ') || 'none'}`,
        );
    }
    // Each kind of answer came up (so the check above saw each of them).
    expect(new Set(answers)).toEqual(new Set(['400 text/html', '400 text/plain', '400 application/json']));
    expect(undeclared).toEqual([]);
  });
});
