import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClientThroughAdminApi } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** A receiver on loopback; `hang` holds every request open until the server closes. */
async function startReceiver(hang: boolean) {
  const state = { received: [] as string[], open: 0, mostOpen: 0 };
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      state.received.push(raw);
      state.open += 1;
      state.mostOpen = Math.max(state.mostOpen, state.open);
      const done = () => (state.open -= 1);
      if (hang) {
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

describe("Notification callbacks: one receiver's host cannot take every callback slot of a worker", () => {
  let service: TestService;
  let worker: WorkerProcess;
  let token: string;
  let silent: Awaited<ReturnType<typeof startReceiver>>;
  let answering: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    service = await startTestService('callbackhosts', {
      NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on',
      NOTIFICATION_CALLBACK_CONCURRENCY: '4',
      NOTIFICATION_CALLBACK_CONCURRENCY_PER_HOST: '1',
      // Long enough that a callback waiting behind the silent receiver's slots would show.
      NOTIFICATION_CALLBACK_TIMEOUT_MS: '15000',
      RATE_LIMIT_NOTIFICATIONS_PER_USER: '100',
    });
    [silent, answering] = [await startReceiver(true), await startReceiver(false)];
    ({ accessToken: token } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'carol' });
    worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(worker, 'notification-callback worker running');
  });
  afterAll(async () => {
    worker.child.kill('SIGKILL');
    await worker.exited;
    await silent.close();
    await answering.close();
    await service.close();
  });

  /** A notification with this callbackUrl, ended at once by its client (its callback queued). */
  async function endedWithCallback(callbackUrl: string): Promise<string> {
    const created = await sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('carol', { callbackUrl }));
    expect(created.status).toBe(201);
    const { notification_uuid: uuid } = (await created.json()) as { notification_uuid: string };
    expect((await sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', token, {})).status).toBe(200);
    return uuid;
  }

  test('when a silent receiver holds its share of the slots, then its other callbacks wait and another receiver gets its callback at once', async () => {
    for (let i = 0; i < 4; i++) await endedWithCallback(silent.url);
    await eventually(async () => (silent.state.open === 1 ? true : undefined), 10_000);

    const uuid = await endedWithCallback(answering.url);
    const cancelledAt = Date.now();
    await eventually(async () => (answering.state.received.some((raw) => raw.includes(uuid)) ? true : undefined), 10_000);
    // Well before the silent receiver's first callback times out (15 s), which would free a slot.
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
    expect(silent.state.mostOpen).toBe(1);
    expect(silent.state.received).toHaveLength(1);
  }, 30_000);
});
