import { rotateClientSecret } from '../../core/clients/client-secret-rotation.js';
import { generateClientSecret, hashClientSecret } from '../../core/clients/client-secret.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { updateClient } from '../../core/clients/clients.service.js';
import { requestToken } from '../support/auth-helpers.js';
import { insertUser } from '../support/user-fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

const D1_TIMESTAMP = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const errorBody = (status: number, error: string, message: string, path: string) => ({
  timestamp: expect.stringMatching(D1_TIMESTAMP),
  status,
  error,
  message,
  path,
});

/** The path of an answer's `Link: <...>; rel="next"` (RFC 8288), or null when it is the last page. */
function nextLink(res: Response): string | null {
  const match = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '');
  return match ? (match[1] as string) : null;
}

describe('admin API: clients and groups', () => {
  let service: TestService;
  beforeAll(async () => {
    // Wrong secrets are sent here to count store reads; their limit has its own tests
    // (client-authentication-limits).
    service = await startTestService('admin', { RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS: '1000' });
  });
  afterAll(async () => {
    await service.close();
  });

  function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return fetch(`${service.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${service.config.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  describe('clients', () => {
    test('when a confidential client is created, then 201 with its id and secret, and the secret gets tokens', async () => {
      const res = await admin('POST', '/admin/clients', { name: 'acme', scopes: ['otp', 'users'], allowedIps: ['127.0.0.1', '::1/128'] });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { client_id: string; client_secret: string };
      expect(body).toEqual({
        client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        callback_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(res.headers.get('location')).toBe(`/admin/clients/${body.client_id}`);

      const token = await requestToken(service, { clientId: body.client_id, clientSecret: body.client_secret });
      expect(token.status).toBe(200);
      expect(((await token.json()) as { scope: string }).scope).toBe('otp users');
    });

    test('when a client is created, then only a hash of its secret is stored', async () => {
      const res = await admin('POST', '/admin/clients', { name: 'hashed', scopes: ['otp'] });
      const { client_id: clientId, client_secret: secret } = (await res.json()) as { client_id: string; client_secret: string };
      const stored = await service.ctx.mongo.collection('clients').findOne({ clientId });
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(stored?.secretHash).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    });

    test('when a client is read back, then it is shown without any secret', async () => {
      const created = (await (
        await admin('POST', '/admin/clients', {
          name: 'readback',
          scopes: ['notifications'],
          allowedIps: ['10.0.0.0/8'],
          redirectUris: ['https://app.example/cb'],
        })
      ).json()) as { client_id: string };
      const res = await admin('GET', `/admin/clients/${created.client_id}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        client_id: created.client_id,
        enterpriseId: 'default',
        name: 'readback',
        scopes: ['notifications'],
        allowedIps: ['10.0.0.0/8'],
        redirectUris: ['https://app.example/cb'],
        webOrigins: [],
        public: false,
        firstParty: true,
        test: false,
        testCodes: [],
        hasCallbackSecret: true,
        createdAt: expect.stringMatching(ISO),
      });
    });

    test('when a public client is created, then it gets no secret and cannot use client_credentials', async () => {
      const res = await admin('POST', '/admin/clients', {
        name: 'spa',
        scopes: [],
        redirectUris: ['https://spa.example/cb'],
        public: true,
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { client_id: string };
      expect(body).toEqual({ client_id: expect.any(String) });
      const token = await fetch(`${service.url}/svc/authserver/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: body.client_id }).toString(),
      });
      expect(token.status).toBe(400);
      // RFC 6749 5.2's code for a grant type the client may not use (not a malformed request).
      expect(await token.json()).toEqual({
        error: 'unauthorized_client',
        error_description: 'requested grant type is not allowed for this client',
      });
    });

    test('when a public client has no redirect URI, then 422 naming redirectUris', async () => {
      const res = await admin('POST', '/admin/clients', { name: 'spa', scopes: [], public: true });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        errorBody(422, 'Invalid data.', 'Invalid field redirectUris: a public client needs at least one redirect URI', '/admin/clients'),
      );
    });

    test('when a client is created with firstParty false, then it is stored and shown as third-party', async () => {
      const created = (await (
        await admin('POST', '/admin/clients', {
          name: 'partner',
          scopes: [],
          redirectUris: ['https://partner.example/cb'],
          firstParty: false,
        })
      ).json()) as { client_id: string };
      const res = await admin('GET', `/admin/clients/${created.client_id}`);
      expect(((await res.json()) as { firstParty: boolean }).firstParty).toBe(false);
    });

    test('when clients are listed, then every client appears without secrets', async () => {
      const res = await admin('GET', '/admin/clients');
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>[];
      expect(body.length).toBeGreaterThanOrEqual(4);
      for (const client of body) {
        expect(Object.keys(client).sort()).toEqual([
          'allowedIps',
          'client_id',
          'createdAt',
          'enterpriseId',
          'firstParty',
          'hasCallbackSecret',
          'name',
          'public',
          'redirectUris',
          'scopes',
          'test',
          'testCodes',
          'webOrigins',
        ]);
      }
      expect(body.map((c) => c.name)).toEqual(expect.arrayContaining(['acme', 'hashed', 'readback', 'spa']));
    });

    test('when clients are listed a page at a time, then limit bounds each page, a Link header names the next, and the pages hold every client once', async () => {
      const everyClient = ((await (await admin('GET', '/admin/clients')).json()) as { client_id: string }[]).map((c) => c.client_id);
      const seen: string[] = [];
      let next: string | null = '/admin/clients?limit=2';
      while (next !== null) {
        const res = await admin('GET', next);
        expect(res.status).toBe(200);
        const page = (await res.json()) as { client_id: string }[];
        expect(page.length).toBeLessThanOrEqual(2);
        seen.push(...page.map((client) => client.client_id));
        next = nextLink(res);
        expect(seen.length).toBeLessThanOrEqual(everyClient.length);
      }
      expect(seen).toEqual(everyClient);
      expect(everyClient.length).toBeGreaterThan(2);
    });

    test('when a client is deleted, then 204, it is gone, and it can no longer get tokens', async () => {
      const created = (await (await admin('POST', '/admin/clients', { name: 'doomed', scopes: ['otp'] })).json()) as {
        client_id: string;
        client_secret: string;
      };
      const del = await admin('DELETE', `/admin/clients/${created.client_id}`);
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      const get = await admin('GET', `/admin/clients/${created.client_id}`);
      expect(get.status).toBe(404);
      expect(await get.json()).toEqual(errorBody(404, 'Not Found', 'Client not found', `/admin/clients/${created.client_id}`));
      const token = await requestToken(service, { clientId: created.client_id, clientSecret: created.client_secret });
      expect(token.status).toBe(401);
      expect(await token.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    });

    test('when an unknown client is deleted, then 404', async () => {
      const res = await admin('DELETE', '/admin/clients/nope');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'Client not found', '/admin/clients/nope'));
    });

    test('when a field breaks the schema, then 422 naming the field', async () => {
      const cases: [unknown, string][] = [
        [{ scopes: ['otp'] }, "Invalid field name: must have required property 'name'"],
        [{ name: 'x', scopes: ['admin'] }, 'Invalid field scopes[0]: must be equal to one of the allowed values'],
        [{ name: 'x', scopes: ['otp'], extra: 1 }, 'Invalid field extra: is not allowed'],
        [
          { name: 'x', scopes: ['otp'], redirectUris: ['https://app.example/cb#done'] },
          'Invalid field redirectUris[0]: must not contain a fragment (#)',
        ],
        [
          { name: 'x', scopes: ['otp'], allowedIps: ['300.1.1.1/8'] },
          "Invalid field allowedIps: '300.1.1.1/8' is not an IP address or CIDR range",
        ],
      ];
      for (const [body, message] of cases) {
        const res = await admin('POST', '/admin/clients', body);
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', message, '/admin/clients'));
      }
    });

    test('when the body is not JSON, then 400 Malformed request body', async () => {
      for (const body of ['{"name":', '[1,2]', '"text"']) {
        const res = await admin('POST', '/admin/clients', body);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', '/admin/clients'));
      }
    });

    test('when the content type is not JSON, then 415 naming it', async () => {
      const res = await admin('POST', '/admin/clients', 'name=x', { 'content-type': 'text/plain;charset=UTF-8' });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual(
        errorBody(415, 'Unsupported Media Type', "Content type 'text/plain;charset=UTF-8' not supported", '/admin/clients'),
      );
    });
  });

  describe('client changes', () => {
    async function createConfidential(name: string, scopes: string[] = ['otp', 'users']) {
      const res = await admin('POST', '/admin/clients', { name, scopes, allowedIps: ['127.0.0.1/32'] });
      return (await res.json()) as { client_id: string; client_secret: string };
    }
    async function activity(clientId: string): Promise<{ action: string; clientId?: string; comments?: string }[]> {
      const res = await admin('GET', '/admin/activity?enterpriseId=default&limit=100');
      const page = (await res.json()) as { activity: { action: string; clientId?: string; comments?: string }[] };
      return page.activity.filter((entry) => entry.clientId === clientId).reverse();
    }
    const tokenScope = async (clientId: string, clientSecret: string) => {
      const res = await requestToken(service, { clientId, clientSecret });
      return res.status === 200 ? ((await res.json()) as { scope: string }).scope : res.status;
    };

    test('when name, scopes and allowedIps are patched, then they are stored normalised, recorded, and the next token carries the new scopes', async () => {
      const created = await createConfidential('patchme');
      const res = await admin('PATCH', `/admin/clients/${created.client_id}`, {
        name: 'Patched',
        scopes: ['notifications', 'otp'],
        allowedIps: ['10.1.2.3', '2001:db8::/32'],
        comments: 'ticket 12',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        client_id: created.client_id,
        name: 'Patched',
        scopes: ['notifications', 'otp'],
        allowedIps: ['10.1.2.3/32', '2001:db8::/32'],
        redirectUris: [],
        public: false,
        hasCallbackSecret: true,
      });
      expect(await (await admin('GET', `/admin/clients/${created.client_id}`)).json()).toMatchObject({ name: 'Patched' });
      expect(await tokenScope(created.client_id, created.client_secret)).toBe('notifications otp');
      expect(await activity(created.client_id)).toEqual([
        expect.objectContaining({ action: 'client.created' }),
        expect.objectContaining({ action: 'client.updated', comments: 'ticket 12' }),
      ]);
    });

    test('when a scope is removed, then a token issued before is refused for it (403) and keeps the others', async () => {
      const created = await createConfidential('narrowed', ['otp', 'users']);
      const token = (await (await requestToken(service, { clientId: created.client_id, clientSecret: created.client_secret })).json()) as {
        access_token: string;
      };
      const usersCall = () =>
        fetch(`${service.url}/v1/users/nobody`, { headers: { authorization: `Bearer ${token.access_token}` } }).then((r) => r.status);
      expect(await usersCall()).toBe(404);
      expect((await admin('PATCH', `/admin/clients/${created.client_id}`, { scopes: ['otp'] })).status).toBe(200);
      expect(await usersCall()).toBe(403);
    });

    test('when a patch breaks a rule or names an unknown field, then 422 naming it and nothing changes', async () => {
      const created = await createConfidential('strict');
      const cases: [unknown, string][] = [
        [{ scopes: ['admin'] }, 'Invalid field scopes[0]: must be equal to one of the allowed values'],
        [{ name: '' }, 'Invalid field name: must NOT have fewer than 1 characters'],
        [{ allowedIps: ['300.1.1.1'] }, "Invalid field allowedIps: '300.1.1.1' is not an IP address or CIDR range"],
        [{ enterpriseId: 'other' }, 'Invalid field enterpriseId: is not allowed'],
        [{ public: true }, 'Invalid field public: is not allowed'],
        [{}, 'Invalid field (body): must NOT have fewer than 1 properties'],
      ];
      for (const [body, message] of cases) {
        const res = await admin('PATCH', `/admin/clients/${created.client_id}`, body);
        expect([res.status, ((await res.json()) as { message: string }).message]).toEqual([422, message]);
      }
      expect(await (await admin('GET', `/admin/clients/${created.client_id}`)).json()).toMatchObject({
        name: 'strict',
        scopes: ['otp', 'users'],
        allowedIps: ['127.0.0.1/32'],
      });
      expect((await admin('PATCH', '/admin/clients/nope', { name: 'x' })).status).toBe(404);
    });

    test('when the client secret is rotated, then the new one is shown once, both work during the grace period, and it is recorded', async () => {
      const created = await createConfidential('rotating');
      const before = Date.now();
      const res = await admin('POST', `/admin/clients/${created.client_id}/secret?comments=yearly`);
      expect(res.status).toBe(200);
      const rotated = (await res.json()) as { client_id: string; client_secret: string; previousSecretExpiresAt: string };
      expect(rotated).toEqual({
        client_id: created.client_id,
        client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        previousSecretExpiresAt: expect.stringMatching(ISO),
      });
      // CLIENT_SECRET_GRACE_SECONDS defaults to 24 hours.
      expect(Date.parse(rotated.previousSecretExpiresAt) - before).toBeGreaterThanOrEqual(86_400_000 - 1000);
      expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeLessThanOrEqual(86_400_000);
      expect(await tokenScope(created.client_id, rotated.client_secret)).toBe('otp users');
      expect(await tokenScope(created.client_id, created.client_secret)).toBe('otp users');
      expect(await tokenScope(created.client_id, 'not-the-secret')).toBe(401);

      const stored = await service.ctx.mongo.collection('clients').findOne({ clientId: created.client_id });
      for (const secret of [created.client_secret, rotated.client_secret]) expect(JSON.stringify(stored)).not.toContain(secret);
      expect(stored?.previousSecretHash).toMatch(/^hmac-sha256\$/);
      expect(await activity(created.client_id)).toEqual([
        expect.objectContaining({ action: 'client.created' }),
        expect.objectContaining({ action: 'client.secret-rotated', comments: 'yearly' }),
      ]);
    });

    test('when the secret is rotated again during a grace period, then the oldest secret stops at once and the two newest work', async () => {
      const created = await createConfidential('twice');
      const first = (await (await admin('POST', `/admin/clients/${created.client_id}/secret`)).json()) as { client_secret: string };
      const second = (await (await admin('POST', `/admin/clients/${created.client_id}/secret`)).json()) as { client_secret: string };
      expect(await tokenScope(created.client_id, created.client_secret)).toBe(401);
      expect(await tokenScope(created.client_id, first.client_secret)).toBe('otp users');
      expect(await tokenScope(created.client_id, second.client_secret)).toBe('otp users');
    });

    test('when the grace period is 0, then the old secret stops at once', async () => {
      const created = await createConfidential('nograce');
      const rotated = await rotateClientSecret(service.services.clients, created.client_id, { graceSeconds: 0 });
      expect(rotated.previousSecretExpiresAt).toBeNull();
      expect(await tokenScope(created.client_id, created.client_secret)).toBe(401);
      expect(await tokenScope(created.client_id, rotated.clientSecret)).toBe('otp users');
    });

    test('when another process rotated the secret, then the new one is accepted at once, before the client cache expires', async () => {
      const created = await createConfidential('elsewhere');
      expect(await tokenScope(created.client_id, created.client_secret)).toBe('otp users'); // cached now
      const stored = await createClientsRepository(service.ctx.mongo).findClientWithSecret(created.client_id);
      const secret = generateClientSecret();
      // What another API process does: the store changes, this process's cache does not hear of it.
      await createClientsRepository(service.ctx.mongo).replaceSecretHash(
        created.client_id,
        stored?.secretHash ?? '',
        hashClientSecret(secret),
        null,
      );
      expect(await tokenScope(created.client_id, secret)).toBe('otp users');
    });

    test('when wrong secrets of a known client arrive in a burst, then the store is read at most once, and a rotation made here still works at once', async () => {
      const created = await createConfidential('guessed');
      expect(await tokenScope(created.client_id, created.client_secret)).toBe('otp users'); // cached now
      const clients = service.services.repositories.clients;
      const read = clients.findClientWithSecret;
      let reads = 0;
      clients.findClientWithSecret = (clientId) => {
        reads += 1;
        return read.call(clients, clientId);
      };
      try {
        for (let i = 0; i < 20; i += 1) expect(await tokenScope(created.client_id, `wrong-${i}`)).toBe(401);
        expect(reads).toBeLessThanOrEqual(1);
      } finally {
        clients.findClientWithSecret = read;
      }
      const rotated = (await (await admin('POST', `/admin/clients/${created.client_id}/secret`)).json()) as { client_secret: string };
      expect(await tokenScope(created.client_id, rotated.client_secret)).toBe('otp users');
    });

    test('when secrets of an unknown or public client are rotated, then 404 Client not found', async () => {
      const pub = (await (
        await admin('POST', '/admin/clients', { name: 'pub', scopes: [], public: true, redirectUris: ['https://pub.example/cb'] })
      ).json()) as { client_id: string };
      for (const path of [`/admin/clients/${pub.client_id}/secret`, '/admin/clients/nope/secret', '/admin/clients/nope/callback-secret']) {
        const res = await admin('POST', path);
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'Client not found', path));
      }
    });

    test('when two rotations of one client race, then one wins and the other is 409, and the winner holds the current secret', async () => {
      const created = await createConfidential('race');
      const answers = await Promise.all([1, 2].map(() => admin('POST', `/admin/clients/${created.client_id}/secret`)));
      const won = answers.filter((r) => r.status === 200);
      expect(won.length).toBeGreaterThanOrEqual(1);
      for (const lost of answers.filter((r) => r.status !== 200)) {
        expect(lost.status).toBe(409);
        expect(((await lost.json()) as { message: string }).message).toBe(
          'Client secret was rotated by another request at the same time; rotate again',
        );
      }
      const secrets = await Promise.all(won.map(async (r) => ((await r.json()) as { client_secret: string }).client_secret));
      const working = await Promise.all(secrets.map((secret) => tokenScope(created.client_id, secret)));
      expect(working).toEqual(secrets.map(() => 'otp users'));
    });

    test('when fixed codes are patched while another request takes the client out of test mode, then it is not left a non-test client holding codes', async () => {
      const res = await admin('POST', '/admin/clients', { name: 'tester', scopes: ['otp'], test: true });
      const clientId = ((await res.json()) as { client_id: string }).client_id;
      const stores = service.services.clients;
      // The codes' patch reads the client (still a test client), then the other request takes it
      // out of test mode, then the codes' patch writes.
      let firstRead = true;
      const racing = {
        ...stores,
        clients: {
          ...stores.clients,
          findClient: async (id: string) => {
            const read = await stores.clients.findClient(id);
            if (firstRead) {
              firstRead = false;
              expect((await admin('PATCH', `/admin/clients/${clientId}`, { test: false })).status).toBe(200);
            }
            return read;
          },
        },
      };
      // Decided again on the client as it is now: a client out of test mode takes no codes.
      const outcome = await updateClient(racing, clientId, { testCodes: [{ userId: 'alice', code: '123456' }] }).catch((err: Error) => err);
      expect(outcome).toMatchObject({ message: 'Invalid field testCodes: only a test client (test: true) can have fixed codes' });
      const stored = (await (await admin('GET', `/admin/clients/${clientId}`)).json()) as { test: boolean; testCodes: unknown[] };
      expect(stored.test).toBe(false);
      expect(stored.testCodes).toEqual([]);
    });

    test('when the callback secret is rotated, then it is recorded with its comments', async () => {
      const created = await createConfidential('callbacks');
      const res = await admin('POST', `/admin/clients/${created.client_id}/callback-secret?comments=leaked`);
      expect(res.status).toBe(200);
      expect(await activity(created.client_id)).toEqual([
        expect.objectContaining({ action: 'client.created' }),
        expect.objectContaining({ action: 'client.callback-secret-rotated', comments: 'leaked' }),
      ]);
    });
  });

  describe('groups', () => {
    test('when a group is created, then 201 with the group', async () => {
      const res = await admin('POST', '/admin/groups', { name: 'retail', description: 'Retail banking' });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ name: 'retail', description: 'Retail banking', createdAt: expect.stringMatching(ISO) });
    });

    test('when a group with that name exists, then 409', async () => {
      await admin('POST', '/admin/groups', { name: 'wholesale' });
      const res = await admin('POST', '/admin/groups', { name: 'wholesale' });
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(errorBody(409, 'Conflict', 'Group wholesale already exists', '/admin/groups'));
    });

    test('when the same group is created concurrently, then exactly one request wins', async () => {
      const results = await Promise.all(Array.from({ length: 5 }, () => admin('POST', '/admin/groups', { name: 'racing' })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    });

    test('when groups are listed, then they come sorted by name', async () => {
      const res = await admin('GET', '/admin/groups');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([
        { name: 'racing', description: null, createdAt: expect.stringMatching(ISO) },
        { name: 'retail', description: 'Retail banking', createdAt: expect.stringMatching(ISO) },
        { name: 'wholesale', description: null, createdAt: expect.stringMatching(ISO) },
      ]);
    });

    test('when groups are listed a page at a time, then limit bounds each page, a Link header names the next, and the pages hold every group once', async () => {
      const everyGroup = ((await (await admin('GET', '/admin/groups')).json()) as { name: string }[]).map((group) => group.name);
      const seen: string[] = [];
      let next: string | null = '/admin/groups?limit=2';
      while (next !== null) {
        const res = await admin('GET', next);
        expect(res.status).toBe(200);
        const page = (await res.json()) as { name: string }[];
        expect(page.length).toBeLessThanOrEqual(2);
        seen.push(...page.map((group) => group.name));
        next = nextLink(res);
        expect(seen.length).toBeLessThanOrEqual(everyGroup.length);
      }
      expect(seen).toEqual(everyGroup);
      expect(everyGroup.length).toBeGreaterThan(2);
    });

    test('when the page limit or cursor of a list is out of range or malformed, then 422 naming it', async () => {
      for (const [path, field] of [
        ['/admin/groups?limit=0', 'limit'],
        ['/admin/groups?limit=501', 'limit'],
        ['/admin/groups?cursor=***', 'cursor'],
        // A cursor's second key is a group's id: anything else was not made here.
        ['/admin/groups?cursor=WyJhIiwienoiXQ', 'cursor'],
        ['/admin/clients?limit=x', 'limit'],
        ['/admin/clients?cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ] as const) {
        const res = await admin('GET', path);
        expect(res.status).toBe(422);
        expect(((await res.json()) as { message: string }).message).toBe(`[Invalid field ${field}]`);
      }
    });

    test('when one group is read, then 200 with it; an unknown one is 404', async () => {
      await admin('POST', '/admin/groups', { name: 'private', description: 'Private banking' });
      const res = await admin('GET', '/admin/groups/private');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ name: 'private', description: 'Private banking', createdAt: expect.stringMatching(ISO) });
      const missing = await admin('GET', '/admin/groups/nope');
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual(errorBody(404, 'Not Found', 'Group not found', '/admin/groups/nope'));
    });

    test('when a group no live user names is deleted, then 204 and it is gone; deleting again is 404', async () => {
      await admin('POST', '/admin/groups', { name: 'closing' });
      await insertUser(service.ctx.mongo, { userId: 'gone-user', primaryGroup: 'closing', status: 'DELETED' });
      const res = await admin('DELETE', '/admin/groups/closing');
      expect(res.status).toBe(204);
      expect((await admin('GET', '/admin/groups/closing')).status).toBe(404);
      const again = await admin('DELETE', '/admin/groups/closing');
      expect(again.status).toBe(404);
      expect(await again.json()).toEqual(errorBody(404, 'Not Found', 'Group not found', '/admin/groups/closing'));
    });

    test('when users name a group as primary or secondary group, then deleting it is 409 and it stays', async () => {
      await admin('POST', '/admin/groups', { name: 'busy' });
      await admin('POST', '/admin/groups', { name: 'side' });
      await insertUser(service.ctx.mongo, { userId: 'busy-1', primaryGroup: 'busy' });
      await insertUser(service.ctx.mongo, { userId: 'busy-2', primaryGroup: 'retail', secondaryGroups: ['busy', 'side'] });
      const res = await admin('DELETE', '/admin/groups/busy');
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(errorBody(409, 'Conflict', 'Group busy is in use by 2 users', '/admin/groups/busy'));
      const side = await admin('DELETE', '/admin/groups/side');
      expect(await side.json()).toEqual(errorBody(409, 'Conflict', 'Group side is in use by 1 user', '/admin/groups/side'));
      expect((await admin('GET', '/admin/groups/busy')).status).toBe(200);
    });

    test('when a group name holds a comma or ends with a blank, then 422 naming the field and the rule in words', async () => {
      for (const name of ['a,b', 'staff ']) {
        const res = await admin('POST', '/admin/groups', { name });
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(
          errorBody(422, 'Invalid data.', 'Invalid field name: must not contain a comma, nor begin or end with a blank', '/admin/groups'),
        );
      }
    });
  });

  describe('admin authentication', () => {
    test('when the admin token is missing or wrong, then 401 before anything else', async () => {
      for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${service.config.adminToken}`]) {
        const res = await fetch(`${service.url}/admin/clients`, {
          method: 'POST',
          headers: authorization ? { authorization, 'content-type': 'text/plain' } : {},
          body: 'x',
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual(errorBody(401, 'Unauthorized', 'Invalid or missing admin token', '/admin/clients'));
      }
      const list = await fetch(`${service.url}/admin/groups`);
      expect(list.status).toBe(401);
      expect(await list.json()).toEqual(errorBody(401, 'Unauthorized', 'Invalid or missing admin token', '/admin/groups'));
    });

    test('when ADMIN_TOKEN is not configured, then the admin API answers 503', async () => {
      const bare = await startTestService('admin-off', { ADMIN_TOKEN: '' });
      try {
        const res = await fetch(`${bare.url}/admin/clients`, { headers: { authorization: 'Bearer anything-at-all' } });
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual(
          errorBody(503, 'Service Unavailable', 'Admin API disabled: ADMIN_TOKEN is not set', '/admin/clients'),
        );
      } finally {
        await bare.close();
      }
    });
  });
});
