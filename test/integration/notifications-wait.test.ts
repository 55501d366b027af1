import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { WAIT_POLL_MS, waitForFinalState } from '../../api/routes/notification-wait.js';
import { createEnterpriseShares } from '../../core/notifications/enterprise-shares.js';
import { createNotificationEndEvents } from '../../core/notifications/notification-end-events.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import { createWorkerRedis } from '../../core/platform/queues/redis-connection.js';
import { findFreePort } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { ASKS_ONE_PERSON_OFTEN, mintUserToken, notificationBody, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

// An enterprise waiting for the answer: `GET /v1/notifications/{uuid}?wait=` on one API process
// returns when the notification ends through another (this test's own process and a second API
// process started from its compiled entry, on the same Redis and MongoDB).
describe('GET /v1/notifications/{uuid}?wait=: waiting for the answer across API processes', () => {
  let service: TestService;
  let other: WorkerProcess;
  let otherUrl: string;
  let enterprise: string;
  let userToken: string;

  beforeAll(async () => {
    service = await startTestService('notifwait', ASKS_ONE_PERSON_OFTEN);
    const port = await findFreePort();
    other = spawnProcessEntry('api/main.js', { ...service.env, PORT: String(port) });
    otherUrl = `http://127.0.0.1:${port}`;
    ({ accessToken: enterprise } = await createClientWithToken(service, { scopes: ['notifications'] }));
    const appClientId = await registerAppClient(service);
    await insertUser(service.ctx.mongo, { userId: 'waiter1' });
    userToken = await mintUserToken(service, { userId: 'waiter1', clientId: appClientId });
    await waitForOutput(other, 'API listening', 120000);
  });
  afterAll(async () => {
    other.child.kill('SIGTERM');
    await other.exited;
    await service.close();
  });

  async function createNotification(): Promise<string> {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody('waiter1'));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  }
  const read = (base: string, uuid: string, wait: string, signal?: AbortSignal) =>
    fetch(`${base}/v1/notifications/${uuid}?wait=${wait}`, {
      headers: { authorization: `Bearer ${enterprise}` },
      ...(signal ? { signal } : {}),
    });

  test('when the user answers through one process while the enterprise waits on another, then the wait returns UPDATED before its timeout', async () => {
    const uuid = await createNotification();
    const started = Date.now();
    const waiting = read(otherUrl, uuid, '30');
    const answered = await sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', userToken, { response: 'accept' });
    expect(answered.status).toBe(200);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ notification_uuid: uuid, status: 'UPDATED', action: 'accept' });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  test('when the enterprise cancels through the other process, then a wait on this one returns CANCELLED', async () => {
    const uuid = await createNotification();
    const waiting = read(service.url, uuid, '30');
    const cancelled = await sendJson(`${otherUrl}/v1/notifications/${uuid}/cancel`, 'POST', enterprise, {});
    expect(cancelled.status).toBe(200);
    expect(await (await waiting).json()).toMatchObject({ status: 'CANCELLED' });
  });

  test('when nothing happens, then the wait ends at its timeout with the state as it is', async () => {
    const uuid = await createNotification();
    const started = Date.now();
    const res = await read(otherUrl, uuid, '1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await res.json()).toMatchObject({ status: 'ACTIVE' });
  });

  test('when the notification expires during the wait, then the wait returns EXPIRED (no message needed: the clock says so)', async () => {
    const uuid = await createNotification();
    await service.ctx.mongo
      .collection('notifications')
      .updateOne({ _id: uuid as never }, { $set: { expiresAt: new Date(Date.now() + 1500) } });
    expect(await (await read(otherUrl, uuid, '30')).json()).toMatchObject({ status: 'EXPIRED' });
  });

  test('when the notification has already ended, then the answer comes at once; a plain read never waits', async () => {
    const uuid = await createNotification();
    await sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', userToken, { response: 'reject' });
    expect(await (await read(otherUrl, uuid, '60')).json()).toMatchObject({ status: 'UPDATED', action: 'reject' });
    expect(await (await read(otherUrl, uuid, '0')).json()).toMatchObject({ status: 'UPDATED' });
  });

  test('when the answer is told while the waiter is reading, then it reads again at once rather than sleeping a poll interval', async () => {
    const uuid = await createNotification();
    const records = createNotificationsRepository(service.ctx.mongo);
    let reads = 0;
    let staleReadDoneAt = 0;
    const read = async (): Promise<Notification> => {
      reads += 1;
      const found = (await records.find(uuid)) as Notification;
      if (reads === 2) {
        // The answer lands after this read saw ACTIVE, and its end event reaches this process
        // (this test's listener is called with the waiter's) before the read returns.
        const heard = new Promise<void>((resolve) => {
          const stop = service.ctx.notificationEnds.listen(uuid, () => {
            stop();
            resolve();
          });
        });
        const answered = await sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', userToken, { response: 'accept' });
        expect(answered.status).toBe(200);
        await heard;
        staleReadDoneAt = Date.now();
      }
      return found;
    };
    const result = await waitForFinalState({
      read,
      events: service.ctx.notificationEnds,
      uuid,
      seconds: 30,
      res: new EventEmitter() as unknown as Response,
      isDraining: () => false,
      shares: createEnterpriseShares({ capacity: 1000, sharePercent: 25 }),
      enterpriseId: 'default',
    });
    expect(result).toMatchObject({ status: 'UPDATED' });
    expect(reads).toBe(3);
    expect(Date.now() - staleReadDoneAt).toBeLessThan(WAIT_POLL_MS / 2);
  });

  test('when the client goes away, then its listener is released and the request is counted as aborted', async () => {
    const aborted = 'http_request_duration_seconds_count{method="GET",route="/v1/notifications/:uuid",status="aborted"}';
    const abortedSoFar = async () => {
      const line = (await (await fetch(`${service.url}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${aborted} `));
      return line ? Number(line.slice(aborted.length + 1)) : 0;
    };
    const before = await abortedSoFar();
    const uuid = await createNotification();
    const abort = new AbortController();
    const waiting = read(service.url, uuid, '60', abort.signal).catch((err: Error) => err.name);
    await eventually(async () => (service.ctx.notificationEnds.listeners() === 1 ? true : undefined));
    abort.abort();
    expect(await waiting).toBe('AbortError');
    await eventually(async () => (service.ctx.notificationEnds.listeners() === 0 ? true : undefined));
    // A caller that gave up is an answer operators must see (a load balancer's timeout looks like this).
    expect(await eventually(async () => ((await abortedSoFar()) === before + 1 ? true : undefined))).toBe(true);
  });

  test.each(['61', '-1', '1.5', 'abc', ''])('when wait is %p, then 422 [Invalid field wait]', async (wait) => {
    const uuid = await createNotification();
    const res = await read(service.url, uuid, wait);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ message: '[Invalid field wait]' });
  });

  test('when another client waits on the notification, then 404 as for a plain read', async () => {
    const uuid = await createNotification();
    const { accessToken: stranger } = await createClientWithToken(service, { scopes: ['notifications'] });
    const res = await fetch(`${otherUrl}/v1/notifications/${uuid}?wait=5`, { headers: { authorization: `Bearer ${stranger}` } });
    expect(res.status).toBe(404);
  });
});

describe('notification end events on Redis', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('notifevents');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when one process publishes that a notification ended, then a listener of another process hears it, and an unsubscribed one does not', async () => {
    const events = (name: string) =>
      createNotificationEndEvents({
        redis: service.ctx.redis,
        openSubscriber: () => createWorkerRedis(service.config.redis),
        channel: `${service.config.queuePrefix}:notification-ended-test`,
        logger: service.ctx.logger.child({ name }),
      });
    const [a, b] = [events('a'), events('b')];
    try {
      const heard: string[] = [];
      const stop = b.listen('n-1', () => heard.push('n-1'));
      b.listen('n-2', () => heard.push('n-2'));
      await b.ready();
      await a.publish(['n-1', 'n-3']);
      await eventually(async () => (heard.length > 0 ? true : undefined));
      stop();
      await a.publish(['n-1', 'n-2']);
      await eventually(async () => (heard.includes('n-2') ? true : undefined));
      expect(heard).toEqual(['n-1', 'n-2']);
    } finally {
      a.close();
      b.close();
    }
  });
});

// Each enterprise's share of a process's waiting requests (NOTIFICATION_WAITS_PER_PROCESS, set low,
// and NOTIFICATION_WAITS_ENTERPRISE_SHARE_PERCENT): one client's many waits cannot keep another
// enterprise's clients from waiting.
describe('GET /v1/notifications/{uuid}?wait=: each enterprise’s share of a process’s waits', () => {
  let service: TestService;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    service = await startTestService('waitshare', {
      NOTIFICATION_WAITS_PER_PROCESS: '2',
      NOTIFICATION_WAITS_ENTERPRISE_SHARE_PERCENT: '50',
    });
    for (const enterpriseId of ['acme', 'globex']) {
      await insertUser(service.ctx.mongo, { userId: `${enterpriseId}-user`, enterpriseId });
      ({ accessToken: tokens[enterpriseId] } = await createClientWithToken(service, { scopes: ['notifications'], enterpriseId }));
    }
  });
  afterAll(async () => {
    await service.close();
  });

  async function createNotification(enterpriseId: string): Promise<string> {
    const res = await sendJson(
      `${service.url}/v1/notifications`,
      'POST',
      tokens[enterpriseId] as string,
      notificationBody(`${enterpriseId}-user`),
    );
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  }
  /** Waits on the notification; resolves with the answer's status and how long it took. */
  const wait = async (enterpriseId: string, uuid: string, seconds: number, signal?: AbortSignal) => {
    const started = Date.now();
    const res = await fetch(`${service.url}/v1/notifications/${uuid}?wait=${seconds}`, {
      headers: { authorization: `Bearer ${tokens[enterpriseId] as string}` },
      ...(signal ? { signal } : {}),
    });
    return { status: res.status, notification: ((await res.json()) as { status: string }).status, ms: Date.now() - started };
  };
  const waiting = (count: number) => eventually(async () => (service.ctx.notificationEnds.listeners() === count ? true : undefined));

  test('when one enterprise holds all of the process’s waits, then another enterprise still waits, the first one’s oldest wait is answered at once, and its next one too', async () => {
    const [first, second, third] = [await createNotification('acme'), await createNotification('acme'), await createNotification('acme')];
    const other = await createNotification('globex');
    const abort = new AbortController();
    try {
      // Alone, an enterprise takes every wait of the process, as a deployment of one enterprise does.
      const oldest = wait('acme', first as string, 8);
      await waiting(1);
      void wait('acme', second as string, 8, abort.signal).catch(() => undefined);
      await waiting(2);

      // The process is full and acme above its share: its next wait is answered at once.
      const refused = await wait('acme', third as string, 8);
      expect(refused).toMatchObject({ status: 200, notification: 'ACTIVE' });
      expect(refused.ms).toBeLessThan(4000);

      // globex, below its share, waits; acme's oldest wait is answered at once to make room.
      const others = wait('globex', other, 2);
      const letGo = await oldest;
      expect(letGo).toMatchObject({ status: 200, notification: 'ACTIVE' });
      expect(letGo.ms).toBeLessThan(6000);
      const answered = await others;
      expect(answered).toMatchObject({ status: 200, notification: 'ACTIVE' });
      expect(answered.ms).toBeGreaterThanOrEqual(1500);
    } finally {
      abort.abort();
    }
  });
});
