import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeApi } from '../../api/composition-root.js';
import { toHttpRefusal } from '../../api/errors/http-error-mapping.js';
import { loadConfig } from '../../core/platform/config/config.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries } from '../../core/deliveries/delivery-sweeper.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { DEFAULT_SERVER_SELECTION_TIMEOUT_MS } from '../../core/platform/db/mongo-connection.js';
import { parseGenerateOtpRequest } from '../../core/otp/otp-request.validator.js';
import { requeueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { startMongoServer, type LocalService } from '../../scripts/local-services.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import { postToAuthServer } from '../support/oauth-flow-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { queueSettled } from '../support/queue-state.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { firstTestMongoHost, testMongoUriVia } from '../support/test-mongo-uri.js';
import { insertUser } from '../support/user-fixtures.js';

const stamp = expect.stringMatching(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);

/**
 * A MongoDB that is down gets its 503 at once, although server selection waits up to 15 s (to
 * outlast an election): the bound is room for a loaded machine, far below that wait.
 */
const ANSWER_BOUND_MS = 1500;

describe('MongoDB outage: quick 503 (not the election-sized selection wait), nothing sent for refused requests', () => {
  let mongo: LocalService;
  let service: TestService;
  let token: string;
  let cachedApp: { clientId: string; clientSecret: string };
  const dataDir = mkdtempSync(join(tmpdir(), 'mongo-outage-'));
  const backend = { journalFile: join(dataDir, 'journal.bson') };

  beforeAll(async () => {
    // This file stops MongoDB, so it has a MongoDB-wire server of its own (on disk, so clients,
    // templates and users are still there after the restart).
    mongo = await startMongoServer({ backend });
    service = await startTestService('mongooutage', {
      MONGODB_URI: `${mongo.url}/outage`,
      SWEEPER_INTERVAL_MS: '200',
      SWEEPER_GRACE_MS: '300',
    });
    const created = await createClientWithToken(service, { scopes: ['otp'] });
    token = created.accessToken;
    cachedApp = { clientId: created.clientId, clientSecret: created.clientSecret };
    await insertUser(service.ctx.mongo, { userId: 'gina', mobileNumber: '+15550003333' });
  });
  afterAll(async () => {
    await service.close();
    await mongo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when MongoDB is stopped, then OTP requests get 503 with Retry-After quickly, nothing they asked for is sent, and service resumes once it is back', async () => {
    // Warm the token cache, so the refusal below comes from the request's own store work.
    expect((await postJson(`${service.url}/v1/svc-otp`, token, otpBody('gina'))).status).toBe(200);
    expect(service.ctx.mongo.getClient().options.serverSelectionTimeoutMS).toBe(DEFAULT_SERVER_SELECTION_TIMEOUT_MS);
    // Registered, never looked up by the authorization server: its token request needs the store.
    const { client, clientSecret } = await registerClient(service.services.clients, { name: 'outage app', scopes: ['otp'] });
    const uncachedApp = { clientId: client.clientId, clientSecret: clientSecret as string };
    await mongo.stop();

    const refusals: { status: number; ms: number; retryAfter: string | null; body: unknown }[] = [];
    for (let i = 0; i < 3; i += 1) {
      const started = Date.now();
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('gina'));
      refusals.push({ status: res.status, ms: Date.now() - started, retryAfter: res.headers.get('retry-after'), body: await res.json() });
    }
    for (const refusal of refusals) {
      expect(refusal).toEqual({
        status: 503,
        ms: expect.any(Number),
        retryAfter: '5',
        body: {
          timestamp: stamp,
          status: 503,
          error: 'Service Unavailable',
          message: 'Service unavailable: the database is not reachable; retry later',
          path: '/v1/svc-otp',
        },
      });
      expect(refusal.ms).toBeLessThanOrEqual(ANSWER_BOUND_MS);
    }
    const status = await fetch(`${service.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.status).toBe(503);
    // The user API (the client library's routes) refuses the same way, in its own body with `code`
    // 39 (unknown error: the app may retry later); the token lookup is the store work that fails.
    const userApiStarted = Date.now();
    const userApi = await fetch(`${service.url}/v1/me/notifications`, { headers: { authorization: 'Bearer opaqueUserToken123' } });
    expect({
      status: userApi.status,
      retryAfter: userApi.headers.get('retry-after'),
      body: await userApi.json(),
      fast: Date.now() - userApiStarted <= ANSWER_BOUND_MS,
    }).toEqual({
      status: 503,
      retryAfter: '5',
      body: {
        timestamp: stamp,
        status: 503,
        error: 'Service Unavailable',
        message: 'Service unavailable: the database is not reachable; retry later',
        path: '/v1/me/notifications',
        code: 39,
      },
      fast: true,
    });
    // The authorization server refuses the same way, in OAuth's words (RFC 6749 5.2): a client it
    // has not looked up before needs the store to authenticate, and that is "retry later", not a
    // server error that would read as a fault of the request.
    const tokenStarted = Date.now();
    const tokenRes = await postToAuthServer(service, '/oauth/token', uncachedApp, { grant_type: 'client_credentials' });
    expect({
      status: tokenRes.status,
      retryAfter: tokenRes.headers.get('retry-after'),
      body: await tokenRes.json(),
      fast: Date.now() - tokenStarted <= ANSWER_BOUND_MS,
    }).toEqual({
      status: 503,
      retryAfter: '5',
      body: { error: 'temporarily_unavailable', error_description: 'the database is not reachable; retry later' },
      fast: true,
    });
    // A client the process has cached gets its token without the store.
    const cachedTokenRes = await postToAuthServer(service, '/oauth/token', cachedApp, { grant_type: 'client_credentials' });
    expect(cachedTokenRes.status).toBe(200);
    // A secret the cache does not hold (one rotated by another process, or a wrong one) is looked
    // up in the store, which cannot tell now: "retry later", not a server error.
    const notCachedSecret = { ...cachedApp, clientSecret: 'not-the-cached-secret' };
    const otherSecret = await postToAuthServer(service, '/oauth/token', notCachedSecret, { grant_type: 'client_credentials' });
    expect({ status: otherSecret.status, retryAfter: otherSecret.headers.get('retry-after'), body: await otherSecret.json() }).toEqual({
      status: 503,
      retryAfter: '5',
      body: { error: 'temporarily_unavailable', error_description: 'the database is not reachable; retry later' },
    });
    // Its new token, never checked against the revocations: introspecting it reads them, and
    // revoking it writes one. Both answer as the provider's own endpoints do, not a bare 500.
    const { access_token: freshToken } = (await cachedTokenRes.json()) as { access_token: string };
    for (const path of ['/oauth/introspect', '/oauth/revoke']) {
      const res = await postToAuthServer(service, path, cachedApp, { token: freshToken });
      expect({ path, status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }).toEqual({
        path,
        status: 503,
        retryAfter: '5',
        body: JSON.stringify({ error: 'temporarily_unavailable', error_description: 'the database is not reachable; retry later' }),
      });
    }
    // A sign-in that cannot look its app up shows a page saying to try again shortly.
    const authorize = await fetch(
      `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({
        client_id: uncachedApp.clientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: 'https://app.example/cb',
      }).toString()}`,
      { headers: { accept: 'text/html' }, redirect: 'manual' },
    );
    expect({ status: authorize.status, retryAfter: authorize.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
    expect(await authorize.text()).toContain('The sign-in service is unavailable for a moment. Try again shortly.');
    const readinessStarted = Date.now();
    const readiness = await fetch(`${service.url}/readyz`);
    expect({ status: readiness.status, body: await readiness.json(), fast: Date.now() - readinessStarted <= ANSWER_BOUND_MS }).toEqual({
      status: 503,
      body: { status: 'unavailable', checks: { mongodb: 'down', redis: 'up' }, down: ['mongodb'] },
      fast: true,
    });

    // Same port, same data file: the connection recovers on its own.
    mongo = await startMongoServer({ port: mongo.port, backend });
    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      const res = await eventually(
        async () => {
          const r = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('gina'));
          return r.status === 200 ? r : undefined;
        },
        // The restarted server replays its files and the driver reconnects: seconds, more on a busy machine.
        30000,
        200,
      );
      // The refusals during the outage used none of the person's budget (5 per 10 minutes): one
      // code before, one now.
      expect(res.headers.get('ratelimit')).toMatch(/"otp-per-user";r=3;t=\d+/);
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      await eventually(async () =>
        (await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid }))?.state === 'SENT' ? true : undefined,
      );
      // Anything the refusals left QUEUED is what a sweep would send: one sweep with its clock past
      // the grace period, then every job it queued has run. The only message is the one answered 200.
      await sweepDeliveries(
        {
          deliveries: createDeliveriesRepository(service.ctx.mongo),
          journal: createSentJournal(service.ctx.redis, service.config.queuePrefix),
          enqueue: (id) => requeueDispatch(service.ctx.queues.dispatch, id),
          logger: memoryLogger().logger,
          graceMs: service.config.sweeperGraceMs,
        },
        new Date(Date.now() + service.config.sweeperGraceMs),
      );
      await queueSettled(service.ctx.queues.dispatch);
      // Before the outage one OTP, after it one: two messages, two rows, none for the refusals.
      expect(await service.ctx.mongo.collection('outbox').countDocuments({})).toBe(2);
      expect(await service.ctx.mongo.collection('deliveries').countDocuments({})).toBe(2);
    } finally {
      await worker.shutdown();
    }
  }, 90000);

  test('when an OTP request is past its deadline before its rows are written, then it is refused with 503 and nothing is queued or sent', async () => {
    const { generation } = composeApi(service.ctx).otp;
    const rowsBefore = await service.ctx.mongo.collection('deliveries').countDocuments({});
    const refusal = await generation
      .generate({
        clientId: 'deadline-test',
        enterpriseId: 'default',
        request: parseGenerateOtpRequest(otpBody('gina')),
        rawBody: otpBody('gina'),
        deadline: Date.now() - 1,
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refusal).toMatchObject({ kind: 'unavailable', retryAfterSeconds: 5 });
    // What the error edge answers it with.
    expect(toHttpRefusal(refusal)).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
      message: 'Service unavailable: the request took too long; retry later',
    });
    expect(await service.ctx.mongo.collection('deliveries').countDocuments({})).toBe(rowsBefore);
  });
});

describe('MongoDB connections reset while MongoDB stays up', () => {
  let proxy: FreezableProxy;
  let service: TestService;
  let token: string;
  let otpUuid: string;

  beforeAll(async () => {
    proxy = await startFreezableProxy(firstTestMongoHost());
    service = await startTestService('mongoreset', { MONGODB_URI: testMongoUriVia(proxy.address, 'mongoreset') });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'rita', mobileNumber: '+15550004444' });
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('rita'));
    expect(res.status).toBe(200);
    ({ otpUuid } = (await res.json()) as { otpUuid: string });
  });
  afterAll(async () => {
    await service.close();
    await proxy.close();
  });

  const status = async () => {
    const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    return res.status === 200 ? 200 : `${res.status} ${res.headers.get('retry-after')} ${await res.text()}`;
  };

  // A connection closed under a command makes the driver forget the server until its monitor has
  // checked it again, a moment later: that is MongoDB answering again, not MongoDB down.
  test('when MongoDB closes the connection of a command in flight, then the requests of that moment wait for the server to be checked again instead of answering 503', async () => {
    expect(await status()).toBe(200);
    proxy.closeConnectionOfNextRequest();
    const answers = await Promise.all(Array.from({ length: 10 }, status));
    expect(answers).toEqual(Array.from({ length: 10 }, () => 200));
  });

  // Idle connections closed by MongoDB or a proxy in between: the first command written to one fails
  // before any reply (the driver does not retry it), and says so as a plain socket error.
  test('when idle connections are closed, then a request that meets one is refused with 503 and Retry-After, never 500, and the next are answered', async () => {
    expect(await status()).toBe(200);
    proxy.resetConnections();
    const answers = await Promise.all(Array.from({ length: 10 }, status));
    const unavailable = `503 5 ${JSON.stringify({
      timestamp: 'T',
      status: 503,
      error: 'Service Unavailable',
      message: 'Service unavailable: the database is not reachable; retry later',
      path: `/v1/svc-otp/${otpUuid}`,
    })}`;
    const stampless = answers.map((a) => (a === 200 ? a : a.replace(/"timestamp":"[^"]*"/, '"timestamp":"T"')));
    expect(stampless.filter((a) => a !== 200 && a !== unavailable)).toEqual([]);
    expect(await status()).toBe(200);
  });
});
