import { jest } from '@jest/globals';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { clientAuthenticationFailures } from '../../core/platform/metrics/business-metrics.js';
import { dataNodes } from '../../core/platform/queues/redis-connection.js';
import { startServiceOnOwnRedis, type ServiceOnOwnRedis } from '../support/own-redis.js';
import { startTestService, type TestService } from '../support/test-service.js';

interface Credentials {
  clientId: string;
  clientSecret: string;
}

const LIMITED_BODY = {
  error: 'temporarily_unavailable',
  error_description: expect.stringMatching(/^too many failed client authentications from this address; try again in [0-9]+ seconds$/),
};

const basicOf = ({ clientId, clientSecret }: Credentials) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

/**
 * Calls an endpoint that authenticates clients, from `address` (X-Forwarded-For behind
 * TRUST_PROXY=1), with HTTP Basic (`basic`), the secret in the body (`post`), or no client
 * authentication at all (`none`).
 */
async function call(
  baseUrl: string,
  path: 'token' | 'introspect' | 'revoke',
  address: string,
  credentials: Credentials | undefined,
  method: 'basic' | 'post' = 'basic',
): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const form: Record<string, string> = path === 'token' ? { grant_type: 'client_credentials' } : { token: 'not-a-token' };
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address };
  if (credentials && method === 'basic') headers.authorization = basicOf(credentials);
  if (credentials && method === 'post') Object.assign(form, { client_id: credentials.clientId, client_secret: credentials.clientSecret });
  const res = await fetch(`${baseUrl}/svc/authserver/oauth/${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const wrong = (credentials: Credentials): Credentials => ({ ...credentials, clientSecret: `${credentials.clientSecret}x` });

async function counted(endpoint: string, outcome: string): Promise<number> {
  const values = (await clientAuthenticationFailures.get()).values;
  return values.find((v) => v.labels.endpoint === endpoint && v.labels.outcome === outcome)?.value ?? 0;
}

/**
 * Failed client authentication at the token, introspection and revocation endpoints is limited
 * per (client, caller address) and per caller address (3 and 6 failures per 15 minutes here,
 * instead of 10 and 100, to keep the test short), in the file's Redis (the run's Redis Cluster
 * on the cluster pass).
 */
describe('failed client authentication: limits per (client, address) and per address', () => {
  let service: TestService;
  let acme: Credentials;
  beforeAll(async () => {
    service = await startTestService('clientauthlimit', {
      TRUST_PROXY: '1',
      RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS: '3',
      RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS: '6',
    });
    acme = await newClient('acme');
  });
  afterAll(async () => {
    await service.close();
  });

  async function newClient(name: string): Promise<Credentials> {
    const { client, clientSecret } = await registerClient(service.services.clients, { name, scopes: ['otp'] });
    return { clientId: client.clientId, clientSecret: clientSecret as string };
  }

  test('when a client is sent 3 wrong secrets from one address, then that address gets 429 with Retry-After and an RFC 6749 body for it, right secret included, and the client is not even looked up', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await call(service.url, 'token', '203.0.113.1', wrong(acme))).status);
    expect(statuses).toEqual([401, 401, 401]);

    const lookups = jest.spyOn(service.services.clientLookup, 'clientWithSecret');
    try {
      for (const credentials of [wrong(acme), acme]) {
        const refused = await call(service.url, 'token', '203.0.113.1', credentials);
        expect(refused).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[0-9]+$/), body: LIMITED_BODY });
        expect(Number(refused.retryAfter)).toBeGreaterThan(890);
        expect(Number(refused.retryAfter)).toBeLessThanOrEqual(900);
        expect(refused.body.error_description).toBe(
          `too many failed client authentications from this address; try again in ${refused.retryAfter} seconds`,
        );
      }
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      lookups.mockRestore();
    }
  });

  test('when a client is refused on one address, then its right secret from another address gets a token, and wrong ones there are counted apart', async () => {
    const client = await newClient('beta');
    for (let i = 0; i < 3; i += 1) await call(service.url, 'token', '203.0.113.2', wrong(client));
    expect((await call(service.url, 'token', '203.0.113.2', client)).status).toBe(429);

    const elsewhere = await call(service.url, 'token', '198.51.100.2', client);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.access_token).toEqual(expect.any(String));
    expect((await call(service.url, 'token', '198.51.100.2', wrong(client))).status).toBe(401);
    expect((await call(service.url, 'token', '198.51.100.2', client)).status).toBe(200);
  });

  test('when unknown client ids are sent from one address, then each counts for the address, and after 6 that address gets 429 for every client while others get tokens', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      statuses.push((await call(service.url, 'token', '203.0.113.3', { clientId: `made-up-${i}`, clientSecret: 'guess' })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
    const refused = await call(service.url, 'token', '203.0.113.3', acme);
    expect(refused).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[0-9]+$/), body: LIMITED_BODY });
    expect((await call(service.url, 'introspect', '203.0.113.3', acme)).status).toBe(429);
    expect((await call(service.url, 'token', '198.51.100.3', acme)).status).toBe(200);
  });

  test('when no client authentication is sent, then each request counts for the address like a wrong secret', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await call(service.url, 'token', '203.0.113.4', undefined)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
  });

  test('when wrong secrets go to introspection, revocation and the token endpoint, with Basic and in the body, then they share one count and each endpoint refuses after it', async () => {
    const client = await newClient('gamma');
    expect((await call(service.url, 'introspect', '203.0.113.5', wrong(client), 'post')).status).toBe(401);
    expect((await call(service.url, 'revoke', '203.0.113.5', wrong(client), 'basic')).status).toBe(401);
    expect((await call(service.url, 'token', '203.0.113.5', wrong(client), 'post')).status).toBe(401);
    for (const path of ['token', 'introspect', 'revoke'] as const) {
      for (const method of ['basic', 'post'] as const) {
        expect({ path, method, answer: await call(service.url, path, '203.0.113.5', client, method) }).toEqual({
          path,
          method,
          answer: { status: 429, retryAfter: expect.stringMatching(/^[0-9]+$/), body: LIMITED_BODY },
        });
      }
    }
    // Its own calls from its usual address are untouched.
    expect((await call(service.url, 'introspect', '198.51.100.5', client, 'post')).body).toEqual({ active: false });
    expect((await call(service.url, 'revoke', '198.51.100.5', client)).status).toBe(200);
  });

  test('when a client succeeds between wrong secrets from one address, then the count goes on (a success does not start it over)', async () => {
    const client = await newClient('delta');
    expect((await call(service.url, 'token', '203.0.113.6', wrong(client))).status).toBe(401);
    expect((await call(service.url, 'token', '203.0.113.6', wrong(client))).status).toBe(401);
    expect((await call(service.url, 'token', '203.0.113.6', client)).status).toBe(200);
    expect((await call(service.url, 'token', '203.0.113.6', wrong(client))).status).toBe(401);
    expect((await call(service.url, 'token', '203.0.113.6', client)).status).toBe(429);
  });

  test('when failures are counted and refused, then svc_client_auth_failures_total counts both by endpoint, and the log names the address and the client but no secret', async () => {
    const client = await newClient('epsilon');
    const [failedBefore, limitedBefore] = [await counted('revocation', 'failed'), await counted('revocation', 'limited')];
    for (let i = 0; i < 4; i += 1) await call(service.url, 'revoke', '203.0.113.7', wrong(client));
    expect(await counted('revocation', 'failed')).toBe(failedBefore + 3);
    expect(await counted('revocation', 'limited')).toBe(limitedBefore + 1);
    const warning = service.logLines().find((line) => line.address === '203.0.113.7' && line.budget === 'client-address');
    expect(warning).toMatchObject({ level: 40, endpoint: 'revocation', clientId: client.clientId, retryAfterSeconds: expect.any(Number) });
    expect(JSON.stringify(service.logLines())).not.toContain(client.clientSecret);
  });

  test('when another API process shares the Redis, then it refuses the address at its first failure there and before any check afterwards', async () => {
    const client = await newClient('zeta');
    for (let i = 0; i < 3; i += 1) expect((await call(service.url, 'token', '203.0.113.8', wrong(client))).status).toBe(401);
    // A second app on the same stores: its own process memory, the same Redis counts.
    const other: Server = await new Promise((resolve) => {
      const s = buildApp(service.ctx).listen(0, '127.0.0.1', () => resolve(s));
    });
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      expect((await call(otherUrl, 'token', '198.51.100.8', client)).status).toBe(200);
      const first = await call(otherUrl, 'token', '203.0.113.8', wrong(client));
      expect(first).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[0-9]+$/), body: LIMITED_BODY });
      expect((await call(otherUrl, 'token', '203.0.113.8', client)).status).toBe(429);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  test('when clients get tokens, also while some addresses are refused, then the limits send nothing to Redis', async () => {
    const client = await newClient('eta');
    // Addresses refused by now (earlier tests): this process checks its memory for each request.
    expect((await call(service.url, 'token', '203.0.113.3', client)).status).toBe(429);
    const redis = service.ctx.redis as unknown as { sendCommand: (command: { name: string; args: unknown[] }) => unknown };
    const sent = jest.spyOn(redis, 'sendCommand');
    try {
      for (let i = 0; i < 5; i += 1) {
        expect((await call(service.url, 'token', '198.51.100.10', client)).status).toBe(200);
        expect((await call(service.url, 'introspect', '198.51.100.10', client)).status).toBe(200);
      }
      const limitCommands = sent.mock.calls.filter(([command]) => command.args.some((arg) => String(arg).includes(':rl:clientAuth:')));
      expect(limitCommands).toEqual([]);
    } finally {
      sent.mockRestore();
    }
    // The spy sees the limits' commands when there are some: a failure is counted in Redis.
    const failing = jest.spyOn(redis, 'sendCommand');
    try {
      expect((await call(service.url, 'token', '198.51.100.10', wrong(client))).status).toBe(401);
      expect(failing.mock.calls.filter(([command]) => command.args.some((arg) => String(arg).includes(':rl:clientAuth:')))).not.toEqual([]);
    } finally {
      failing.mockRestore();
    }
  });

  test('when wrong secrets go to the endpoints under other spellings of their paths (upper case, a trailing slash), then the provider serves them and they are counted and refused like at the paths themselves', async () => {
    const client = await newClient('theta');
    const spellings = [
      '/svc/authserver/oauth/TOKEN',
      '/svc/authserver/oauth/token/',
      '/svc/authserver/OAuth/Introspect',
      '/svc/authserver/oauth/revoke/',
    ];
    const statuses: number[] = [];
    for (const spelling of spellings) {
      const res = await fetch(`${service.url}${spelling}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': '203.0.113.9',
          authorization: basicOf(wrong(client)),
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', token: 'not-a-token' }).toString(),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await call(service.url, 'token', '203.0.113.9', client)).status).toBe(429);
  });

  test('when wrong secrets come from one IPv6 /64, each from another address of it, then they are counted as from one address', async () => {
    const client = await newClient('iota');
    const statuses: number[] = [];
    for (const address of ['2001:db8:41:7::1', '2001:db8:41:7::2', '2001:db8:41:7:a:b:c:d', '2001:db8:41:7:ffff:ffff:ffff:ffff']) {
      statuses.push((await call(service.url, 'token', address, wrong(client))).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await call(service.url, 'token', '2001:db8:41:7::99', client)).status).toBe(429);
    expect((await call(service.url, 'token', '2001:db8:41:8::1', client)).status).toBe(200);
  });

  test("when a page calls the token endpoint from an address that used up its failures, then the 429 is readable there like the endpoint's other answers (CORS), with its Retry-After", async () => {
    const origin = 'https://app.example';
    const fromPage = (clientId: string) =>
      fetch(`${service.url}/svc/authserver/oauth/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.10' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: 'not-a-token' }).toString(),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const failed = await fromPage(`made-up-${i}`);
      statuses.push(failed.status);
      expect(failed.headers.get('access-control-allow-origin')).toBe(origin);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);

    const refused = await fromPage('made-up-6');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual(LIMITED_BODY);
    expect(refused.headers.get('access-control-allow-origin')).toBe(origin);
    expect(refused.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('retry-after');
    expect(refused.headers.get('vary')?.toLowerCase()).toContain('origin');
  });

  test('when the keys of the counts are read, then they sit under the deployment prefix (one Redis Cluster slot) and name the budget', async () => {
    const pattern = `${service.config.queuePrefix}:rl:clientAuth:*`;
    const keys = (await Promise.all(dataNodes(service.ctx.redis).map((node) => node.keys(pattern)))).flat();
    expect(keys).toEqual(
      expect.arrayContaining([
        `${service.config.queuePrefix}:rl:clientAuth:address:203.0.113.1`,
        `${service.config.queuePrefix}:rl:clientAuth:clientAddress:${acme.clientId}|203.0.113.1`,
      ]),
    );
  });
});

describe('failed client authentication without a trusted proxy', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('clientauthnoproxy', { RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS: '3' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a caller writes a new X-Forwarded-For for each failure, then the socket address is counted and refused all the same', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await call(service.url, 'token', `198.51.100.${i + 20}`, { clientId: `made-up-${i}`, clientSecret: 'guess' })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe('failed client authentication while Redis is down', () => {
  let service: ServiceOnOwnRedis;
  let client: Credentials;
  beforeAll(async () => {
    service = await startServiceOnOwnRedis('clientauthnoredis', {
      TRUST_PROXY: '1',
      RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS: '3',
    });
    const { client: registered, clientSecret } = await registerClient(service.services.clients, { name: 'acme', scopes: ['otp'] });
    client = { clientId: registered.clientId, clientSecret: clientSecret as string };
  });
  afterAll(async () => {
    await service.close();
  });

  test('when Redis is unreachable, then right secrets still get tokens and wrong ones are counted in this process with the same budget', async () => {
    await service.ownRedis.stop();
    try {
      expect((await call(service.url, 'token', '203.0.113.9', client)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await call(service.url, 'token', '203.0.113.9', wrong(client))).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect((await call(service.url, 'token', '203.0.113.9', client)).status).toBe(429);
      expect((await call(service.url, 'token', '198.51.100.9', client)).status).toBe(200);
    } finally {
      // Back up, so the service closes its connections as usual.
      await service.ownRedis.restart();
    }
  });
});
