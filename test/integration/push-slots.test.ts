import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, notificationBody, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startPushReceiver, type PushReceiver } from '../support/push-receiver.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** A "push service" on loopback that takes every push and never answers, as a user's own endpoint may. */
async function startSilentPushService() {
  const state = { open: 0, received: 0 };
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.received += 1;
      state.open += 1;
      held.push(res);
      res.on('close', () => (state.open -= 1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push`;
  const close = async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { base, state, close };
}

/*
 * Any signed-in user registers push endpoints of their choice (up to PUSH_SUBSCRIPTIONS_PER_USER),
 * and every notification to them is pushed to each, retried while it is pending. Endpoints that
 * never answer hold a push slot each for PUSH_TIMEOUT_MS: one user's, or one enterprise's users',
 * must not hold every slot of the worker and keep everyone else's phones from ringing.
 */
describe("Web Push: one user's silent endpoints cannot take every push slot of a worker", () => {
  let service: TestService;
  let worker: WorkerProcess;
  let receiver: PushReceiver;
  let silent: Awaited<ReturnType<typeof startSilentPushService>>;
  let enterprise: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    service = await startTestService('pushslots', {
      PUSH_ENDPOINT_ALLOW_LOOPBACK: 'on',
      PUSH_CONCURRENCY: '4',
      PUSH_CONCURRENCY_PER_USER: '2',
      // Long enough that a push waiting behind the silent endpoints' slots would show.
      PUSH_TIMEOUT_MS: '15000',
    });
    receiver = await startPushReceiver();
    silent = await startSilentPushService();
    const app = await registerAppClient(service);
    for (const userId of ['mal', 'alice']) {
      await insertUser(service.ctx.mongo, { userId });
      tokens[userId] = await mintUserToken(service, { userId, clientId: app });
    }
    enterprise = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
    const key = await fetch(`${service.url}/v1/me/push-key`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    receiver.expectKey(((await key.json()) as { applicationServerKey: string }).applicationServerKey);
    worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(worker, 'notification-push worker running');
  });
  afterAll(async () => {
    worker.child.kill('SIGKILL');
    await worker.exited;
    await silent.close();
    await receiver.close();
    await service.close();
  });

  const register = async (userId: string, json: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } }) => {
    const res = await sendJson(`${service.url}/v1/me/push-subscriptions`, 'POST', tokens[userId] as string, json);
    expect(res.status).toBe(201);
  };
  const notify = async (userId: string) => {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(userId));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  };

  test("when a user's endpoints never answer, then their pushes hold only the user's share of the slots and another user's push goes at once", async () => {
    // Browser keys of the test's push service, at endpoints that never answer.
    for (let i = 0; i < 4; i++) await register('mal', { ...receiver.subscribe(`mal-${i}`).json, endpoint: `${silent.base}/mal-${i}` });
    const phone = receiver.subscribe('alice-phone');
    await register('alice', phone.json);

    await notify('mal');
    await eventually(async () => (silent.state.open >= 2 ? true : undefined), 10_000);

    await notify('alice');
    const notifiedAt = Date.now();
    await eventually(async () => (receiver.received.some((r) => r.subscription === phone.name) ? true : undefined), 10_000);
    // Well before the silent endpoints' pushes time out (15 s), which would free their slots.
    expect(Date.now() - notifiedAt).toBeLessThan(10_000);
    expect(silent.state.open).toBe(2);
    expect(silent.state.received).toBe(2);
  }, 40_000);
});
