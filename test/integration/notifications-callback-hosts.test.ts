import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClientThroughAdminApi } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { callbackJobId } from '../../core/platform/queues/notification.queue.js';
import { freePort, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** A receiver on loopback; `hang` (changeable in `state`) holds every request open until the server closes. */
async function startReceiver(hang: boolean) {
  const state = { received: [] as string[], open: 0, mostOpen: 0, hang };
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      state.received.push(raw);
      state.open += 1;
      state.mostOpen = Math.max(state.mostOpen, state.open);
      const done = () => (state.open -= 1);
      if (state.hang) {
        held.push(res);
        res.on('close', done);
        return;
      }
      res.statusCode = 200;
      res.end(done);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
  const close = async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url, state, close };
}

/** A service whose notification callbacks may go to loopback receivers, with these settings besides. */
function startCallbackService(name: string, settings: Record<string, string>): Promise<TestService> {
  return startTestService(name, { NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on', RATE_LIMIT_NOTIFICATIONS_PER_USER: '100', ...settings });
}

/** The service's notifications worker (a process of its own), once its callback consumer runs. */
async function startCallbackWorker(service: TestService, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const worker = spawnProcessEntry('workers/notifications/main.js', { ...service.env, ...env });
  await waitForOutput(worker, 'notification-callback worker running');
  return worker;
}

async function stopWorker(worker: WorkerProcess): Promise<void> {
  worker.child.kill('SIGKILL');
  await worker.exited;
}

/** A notification to `userId` with this callbackUrl, ended at once by its client (its callback queued). */
async function endedWithCallback(service: TestService, token: string, userId: string, callbackUrl: string): Promise<string> {
  const created = await sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody(userId, { callbackUrl }));
  expect(created.status).toBe(201);
  const { notification_uuid: uuid } = (await created.json()) as { notification_uuid: string };
  expect((await sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', token, {})).status).toBe(200);
  return uuid;
}

describe("Notification callbacks: one receiver's host cannot take every callback slot of a worker", () => {
  let service: TestService;
  let worker: WorkerProcess;
  let token: string;
  let silent: Awaited<ReturnType<typeof startReceiver>>;
  let answering: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    service = await startCallbackService('callbackhosts', {
      NOTIFICATION_CALLBACK_CONCURRENCY: '4',
      NOTIFICATION_CALLBACK_CONCURRENCY_PER_HOST: '1',
      // Long enough that a callback waiting behind the silent receiver's slots would show.
      NOTIFICATION_CALLBACK_TIMEOUT_MS: '15000',
    });
    [silent, answering] = [await startReceiver(true), await startReceiver(false)];
    ({ accessToken: token } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'carol' });
    worker = await startCallbackWorker(service);
  });
  afterAll(async () => {
    await stopWorker(worker);
    await silent.close();
    await answering.close();
    await service.close();
  });

  const endedWithCallbackTo = (callbackUrl: string) => endedWithCallback(service, token, 'carol', callbackUrl);

  test('when a silent receiver holds its share of the slots, then its other callbacks wait and another receiver gets its callback at once', async () => {
    for (let i = 0; i < 4; i++) await endedWithCallbackTo(silent.url);
    await eventually(async () => (silent.state.open === 1 ? true : undefined), 10_000);

    const uuid = await endedWithCallbackTo(answering.url);
    const cancelledAt = Date.now();
    await eventually(async () => (answering.state.received.some((raw) => raw.includes(uuid)) ? true : undefined), 10_000);
    // Well before the silent receiver's first callback times out (15 s), which would free a slot.
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
    expect(silent.state.mostOpen).toBe(1);
    expect(silent.state.received).toHaveLength(1);
  }, 30_000);
});

// A host is a name and a port: an enterprise can name as many as it likes (its own wildcard DNS
// name, or one address on several ports), each with its own share of the slots. Its silent
// receivers together must still leave the other enterprises' callbacks slots of the worker.
describe("Notification callbacks: one enterprise's silent receivers on many hosts cannot take every callback slot of a worker", () => {
  let service: TestService;
  let worker: WorkerProcess;
  let mallory: string;
  let bank: string;
  let silentHosts: Awaited<ReturnType<typeof startReceiver>>[];
  let answering: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    service = await startCallbackService('callbackenterprise', {
      NOTIFICATION_CALLBACK_CONCURRENCY: '4',
      NOTIFICATION_CALLBACK_CONCURRENCY_PER_HOST: '1',
      NOTIFICATION_CALLBACK_CONCURRENCY_PER_ENTERPRISE: '2',
      // Long enough that a callback waiting behind the silent receivers' slots would show.
      NOTIFICATION_CALLBACK_TIMEOUT_MS: '15000',
    });
    silentHosts = [await startReceiver(true), await startReceiver(true), await startReceiver(true), await startReceiver(true)];
    answering = await startReceiver(false);
    ({ accessToken: mallory } = await createClientThroughAdminApi(service, {
      name: 'mallory',
      scopes: ['notifications'],
      enterpriseId: 'mallory',
    }));
    ({ accessToken: bank } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'mal', enterpriseId: 'mallory' });
    await insertUser(service.ctx.mongo, { userId: 'carol' });
    worker = await startCallbackWorker(service);
  });
  afterAll(async () => {
    await stopWorker(worker);
    for (const receiver of silentHosts) await receiver.close();
    await answering.close();
    await service.close();
  });

  const openAtSilentHosts = () => silentHosts.reduce((sum, receiver) => sum + receiver.state.open, 0);

  test("when an enterprise's callbacks go to silent receivers on more hosts than the worker has slots, then it holds only its share and another enterprise's callback goes at once", async () => {
    for (const receiver of silentHosts) await endedWithCallback(service, mallory, 'mal', receiver.url);
    await eventually(async () => (openAtSilentHosts() >= 2 ? true : undefined), 10_000);

    const uuid = await endedWithCallback(service, bank, 'carol', answering.url);
    const cancelledAt = Date.now();
    await eventually(async () => (answering.state.received.some((raw) => raw.includes(uuid)) ? true : undefined), 10_000);
    // Well before the silent receivers' first callbacks time out (15 s), which would free slots.
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
    expect(openAtSilentHosts()).toBe(2);
    expect(silentHosts.reduce((sum, receiver) => sum + receiver.state.received.length, 0)).toBe(2);
  }, 40_000);
});

describe('Notification callbacks: a receiver that keeps failing is held back, probed, and sent everything once it answers', () => {
  const COOL_DOWN_MS = 6000;
  let service: TestService;
  let worker: WorkerProcess;
  let metricsUrl: string;
  let token: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    service = await startCallbackService('callbackcircuit', {
      NOTIFICATION_CALLBACK_TIMEOUT_MS: '1000',
      NOTIFICATION_CALLBACK_RETRY_BASE_MS: '1000',
      NOTIFICATION_CALLBACK_CIRCUIT_FAILURES: '2',
      NOTIFICATION_CALLBACK_CIRCUIT_COOLDOWN_MS: String(COOL_DOWN_MS),
    });
    receiver = await startReceiver(true);
    ({ accessToken: token } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'carol' });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    worker = await startCallbackWorker(service, { METRICS_PORT: String(metricsPort) });
  });
  afterAll(async () => {
    await stopWorker(worker);
    await receiver.close();
    await service.close();
  });

  const endedWithCallbackToReceiver = () => endedWithCallback(service, token, 'carol', receiver.url);
  const logLine = (text: string) =>
    worker
      .output()
      .split('\n')
      .find((line) => line.includes(text)) ?? '';
  const metric = (scraped: string, series: string) =>
    Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(scraped)?.[1] ?? NaN);

  test('when a receiver times out twice in a row, then its callbacks wait without a request, one probe goes after the cool-down, and all are delivered once it answers', async () => {
    const failedFirst = [await endedWithCallbackToReceiver(), await endedWithCallbackToReceiver()];
    await waitForOutput(worker, 'callback receiver not answering');
    const host = new URL(receiver.url).host;
    const opened = logLine('callback receiver not answering');
    expect(opened).toContain(`"callbackHost":"${host}"`);
    expect(opened).not.toContain('/callbacks');
    // Two, or three when the first one's retry went before the second one failed.
    const sentBeforeOpen = receiver.state.received.length;
    expect(sentBeforeOpen).toBeGreaterThanOrEqual(2);

    // Open: new callbacks and the retries of the two that failed make no request.
    const heldBack = [await endedWithCallbackToReceiver(), await endedWithCallbackToReceiver(), await endedWithCallbackToReceiver()];
    const queue = service.ctx.queues['notification-callback'];
    for (const uuid of heldBack)
      await eventually(async () => ((await queue.getJobState(callbackJobId(uuid))) === 'delayed' ? true : undefined));
    expect(receiver.state.received).toHaveLength(sentBeforeOpen);

    // After the cool-down one probe goes; it times out too, and the circuit opens again.
    await waitForOutput(worker, 'callback receiver still not answering', COOL_DOWN_MS + 5000);
    expect(receiver.state.received).toHaveLength(sentBeforeOpen + 1);

    // The receiver answers again: the next probe closes the circuit and everything follows.
    receiver.state.hang = false;
    await waitForOutput(worker, 'callback receiver answers again', COOL_DOWN_MS + 5000);
    for (const uuid of [...failedFirst, ...heldBack]) {
      const seen = await eventually(async () => {
        const res = await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await res.json()) as { callback_status?: string };
        return body.callback_status === 'SENT' ? body : undefined;
      }, 15_000);
      expect(seen).toMatchObject({ status: 'CANCELLED', callback_status: 'SENT' });
    }
    // Each callback queued while the circuit was open waited (delayed) without a request and
    // without using up an attempt: its attempts are its requests (two for the one that probed in
    // vain, if it was one of them), not its waits.
    for (const uuid of heldBack) {
      const job = await eventually(async () => {
        const j = await queue.getJob(callbackJobId(uuid));
        return (await j?.getState()) === 'completed' ? j : undefined;
      });
      const requests = receiver.state.received.filter((raw) => raw.includes(uuid)).length;
      expect(requests).toBeGreaterThanOrEqual(1);
      expect(job.attemptsMade).toBe(requests);
    }

    const scraped = await (await fetch(metricsUrl)).text();
    expect(metric(scraped, 'svc_notification_callback_circuits_total{outcome="opened"}')).toBe(1);
    expect(metric(scraped, 'svc_notification_callback_circuits_total{outcome="probe_failed"}')).toBeGreaterThanOrEqual(1);
    expect(metric(scraped, 'svc_notification_callback_circuits_total{outcome="probe"}')).toBeGreaterThanOrEqual(2);
    expect(metric(scraped, 'svc_notification_callback_circuits_total{outcome="closed"}')).toBe(1);
    expect(metric(scraped, 'svc_notification_callback_circuits_open')).toBe(0);
    expect(metric(scraped, 'svc_notification_callbacks_deferred_total{reason="circuit_open"}')).toBeGreaterThanOrEqual(3);
    // Hosts and enterprises are never labels.
    expect(scraped).not.toContain(host);
  }, 60_000);
});

/** A receiver on loopback answering by path: 500 under /failing, 200 elsewhere. */
async function startPathReceiver() {
  const received: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      received.push(raw);
      res.statusCode = req.url?.startsWith('/failing') ? 500 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { base, received, close };
}

// Two enterprises whose receivers share a host (one webhook provider, one gateway): one of them
// naming a failing path on that host must not hold back the other's callbacks.
describe("Notification callbacks: one enterprise's failing callbacks do not hold back another enterprise's on the same host", () => {
  const COOL_DOWN_MS = 60_000;
  let service: TestService;
  let worker: WorkerProcess;
  let mallory: string;
  let bank: string;
  let receiver: Awaited<ReturnType<typeof startPathReceiver>>;

  beforeAll(async () => {
    service = await startCallbackService('callbackcircuitshared', {
      NOTIFICATION_CALLBACK_TIMEOUT_MS: '1000',
      NOTIFICATION_CALLBACK_RETRY_BASE_MS: '1000',
      NOTIFICATION_CALLBACK_CIRCUIT_FAILURES: '2',
      NOTIFICATION_CALLBACK_CIRCUIT_COOLDOWN_MS: String(COOL_DOWN_MS),
    });
    receiver = await startPathReceiver();
    ({ accessToken: mallory } = await createClientThroughAdminApi(service, {
      name: 'mallory',
      scopes: ['notifications'],
      enterpriseId: 'mallory',
    }));
    ({ accessToken: bank } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'mal', enterpriseId: 'mallory' });
    await insertUser(service.ctx.mongo, { userId: 'carol' });
    worker = await startCallbackWorker(service);
  });
  afterAll(async () => {
    await stopWorker(worker);
    await receiver.close();
    await service.close();
  });

  test("when an enterprise's callbacks to a shared host fail until its circuit opens, then another enterprise's callbacks to that host still go at once", async () => {
    await endedWithCallback(service, mallory, 'mal', `${receiver.base}/failing/1`);
    await endedWithCallback(service, mallory, 'mal', `${receiver.base}/failing/2`);
    await waitForOutput(worker, 'callback receiver not answering');

    const uuid = await endedWithCallback(service, bank, 'carol', `${receiver.base}/callbacks`);
    const cancelledAt = Date.now();
    await eventually(async () => (receiver.received.some((raw) => raw.includes(uuid)) ? true : undefined), 10_000);
    // Well before the cool-down (60 s) that holds back the failing enterprise's callbacks.
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
  }, 30_000);
});
