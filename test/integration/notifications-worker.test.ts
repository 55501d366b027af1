import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnrecoverableError, Worker } from 'bullmq';
import { notificationModel } from '../../core/notifications/notifications.repository.js';
import type { CreateNotificationInput } from '../../core/notifications/notifications.service.js';
import { callbackJobId, expiryJobId } from '../../core/platform/queues/notification.queue.js';
import { enqueuePushFanout, pushFanoutJobId } from '../../core/platform/queues/push.queue.js';
import { createWorkerRedis } from '../../core/platform/queues/redis-connection.js';
import { createClientThroughAdminApi } from '../support/auth-helpers.js';
import { mintUserToken, notificationBody, notificationsServiceOver, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { jobEnded } from '../support/queue-state.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { untilClockReaches } from '../support/waiting.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

interface Received {
  signature: string;
  raw: string;
  at: number;
}

/** A callback receiver on loopback: answers with the next scripted status (200 when none left). */
async function startReceiver(): Promise<{ url: string; received: Received[]; script: number[]; server: Server }> {
  const received: Received[] = [];
  const script: number[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      received.push({ signature: String(req.headers['x-signature'] ?? ''), raw, at: Date.now() });
      res.statusCode = script.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`, received, script, server };
}

/** The receiver's check: HMAC-SHA256 of `<t>.<raw body>` under the callback secret, constant-time. */
function signatureValid(secret: string, header: string, raw: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const want = createHmac('sha256', secret).update(`${m[1]}.${raw}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2], 'hex')) && Math.abs(Date.now() / 1000 - Number(m[1])) < 300;
}

describe('Notification worker process: expiry jobs, sweep, signed callbacks', () => {
  let service: TestService;
  let worker: WorkerProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let token: string;
  let clientId: string;
  let callbackSecret: string;
  let userToken: string;

  const startWorker = async () => {
    worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(worker, 'notification-callback worker running');
  };
  const stopWorker = async () => {
    if (!worker) return;
    worker.child.kill('SIGTERM');
    await worker.exited;
    worker = undefined;
  };

  beforeAll(async () => {
    service = await startTestService('notifworker', {
      NOTIFICATION_SWEEP_INTERVAL_MS: '500',
      NOTIFICATION_CALLBACK_RETRY_BASE_MS: '200',
      // The receiver listens on loopback, as a developer's would.
      NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on',
    });
    receiver = await startReceiver();
    ({
      clientId,
      callbackSecret,
      accessToken: token,
    } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    expect(callbackSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await insertUser(service.ctx.mongo, { userId: 'alice' });
    userToken = await mintUserToken(service, { userId: 'alice', clientId: await registerAppClient(service) });
    await startWorker();
  });
  afterAll(async () => {
    await stopWorker();
    await new Promise((resolve) => receiver.server.close(resolve));
    await service.close();
  });

  const Notifications = () => notificationModel(service.ctx.mongo);
  const stored = async (uuid: string) => (await Notifications()).findOne({ notificationUuid: uuid }).lean();
  const create = async (overrides: Record<string, unknown> = {}) => {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('alice', overrides));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  };
  const answer = (uuid: string, response = 'accept') =>
    sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', userToken, { response });
  /** Creates through the real service with its clock set back: due `dueInMs` from now on the real clock (negative: already past due). */
  const createDueIn = async (dueInMs: number, overrides: Partial<CreateNotificationInput> = {}) => {
    const service_ = notificationsServiceOver(service, { now: () => new Date(Date.now() - (15_000 - dueInMs)) });
    const body = { ...(notificationBody('alice') as unknown as CreateNotificationInput), expiresIn: 15, ...overrides };
    return (await service_.create({ clientId, enterpriseId: 'default' }, body)).notificationUuid;
  };
  const callbacksFor = (uuid: string) => receiver.received.filter((r) => r.raw.includes(uuid));

  test('when notifications fall due while the worker runs, then each is EXPIRED within 1 s of its expiresAt', async () => {
    const uuids = await Promise.all([800, 1200, 1600, 2000, 2400].map((ms) => createDueIn(ms)));
    for (const uuid of uuids) {
      const record = await eventually(
        async () => {
          const r = await stored(uuid);
          return r?.status === 'EXPIRED' ? r : undefined;
        },
        10_000,
        20,
      );
      const lag = (record.answeredAt as Date).getTime() - record.expiresAt.getTime();
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(1000);
    }
  });

  test('when the worker expires a notification with a callbackUrl, then the receiver gets the signed final state', async () => {
    const uuid = await createDueIn(500, { callbackUrl: receiver.url });
    const [call] = await eventually(async () => (callbacksFor(uuid).length > 0 ? callbacksFor(uuid) : undefined), 10_000);
    expect(signatureValid(callbackSecret, call.signature, call.raw)).toBe(true);
    const record = await stored(uuid);
    expect(JSON.parse(call.raw)).toEqual({
      notification_uuid: uuid,
      status: 'EXPIRED',
      signing_status: 'NA',
      is_ds_verified: false,
      answeredAt: (record?.answeredAt as Date).toISOString(),
    });
    await eventually(async () => ((await stored(uuid))?.callbackState === 'SENT' ? true : undefined));
  });

  test('when the receiver answers 500 twice, then the callback is retried with backoff and delivered once it answers 200', async () => {
    const uuid = await create({ callbackUrl: receiver.url });
    receiver.script.push(500, 500);
    expect((await answer(uuid, 'reject')).status).toBe(200);
    const calls = await eventually(async () => (callbacksFor(uuid).length >= 3 ? callbacksFor(uuid) : undefined), 15_000);
    expect(calls.map((c) => JSON.parse(c.raw) as Record<string, unknown>)).toEqual(
      Array.from({ length: 3 }, () => ({
        notification_uuid: uuid,
        status: 'UPDATED',
        action: 'reject',
        signing_status: 'NA',
        is_ds_verified: false,
        answeredAt: expect.any(String),
      })),
    );
    expect(calls.every((c) => signatureValid(callbackSecret, c.signature, c.raw))).toBe(true);
    // Backoff: 200 ms then 400 ms (NOTIFICATION_CALLBACK_RETRY_BASE_MS doubling).
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(150);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(350);
    await eventually(async () => ((await stored(uuid))?.callbackState === 'SENT' ? true : undefined));
    // The callback job completed (not waiting for another retry): no 4th call comes.
    expect(await jobEnded(service.ctx.queues['notification-callback'], callbackJobId(uuid))).toBe('completed');
    expect(callbacksFor(uuid)).toHaveLength(3);
  });

  test('when a callback receiver keeps failing, then expiries and other callbacks are not held up', async () => {
    const stuck = await create({ callbackUrl: receiver.url.replace('/callbacks', '/stuck') });
    receiver.script.push(...Array.from({ length: 20 }, () => 503));
    expect((await answer(stuck)).status).toBe(200);
    await eventually(async () => (callbacksFor(stuck).length >= 2 ? true : undefined));
    receiver.script.length = 0;
    const due = await createDueIn(400);
    const record = await eventually(
      async () => {
        const r = await stored(due);
        return r?.status === 'EXPIRED' ? r : undefined;
      },
      10_000,
      20,
    );
    expect((record.answeredAt as Date).getTime() - record.expiresAt.getTime()).toBeLessThan(1000);
  });

  test('when the callback secret is rotated, then later callbacks are signed with the new one only', async () => {
    const res = await fetch(`${service.url}/admin/clients/${clientId}/callback-secret`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { client_id: string; callback_secret: string };
    expect(body).toEqual({ client_id: clientId, callback_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const uuid = await create({ callbackUrl: receiver.url });
    const cancelled = await fetch(`${service.url}/v1/notifications/${uuid}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancelled.status).toBe(200);
    const [call] = await eventually(async () => (callbacksFor(uuid).length > 0 ? callbacksFor(uuid) : undefined), 10_000);
    expect(JSON.parse(call.raw)).toMatchObject({ status: 'CANCELLED' });
    expect(signatureValid(body.callback_secret, call.signature, call.raw)).toBe(true);
    expect(signatureValid(callbackSecret, call.signature, call.raw)).toBe(false);
    callbackSecret = body.callback_secret;
    const unknown = await fetch(`${service.url}/admin/clients/nope/callback-secret`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(unknown.status).toBe(404);
  });

  test('when answers stream in across expiresAt while the worker expires, then no answer after expiresAt is accepted and exactly one final state stands', async () => {
    const uuids = await Promise.all(Array.from({ length: 6 }, (_, i) => createDueIn(1500 + i * 150)));
    const results = await Promise.all(
      uuids.map(async (uuid, i) => {
        const expiresAt = (await stored(uuid))?.expiresAt.getTime() ?? 0;
        // Half the streams start well before expiresAt (an answer should win), half just before it.
        const startAt = expiresAt - (i % 2 === 0 ? 150 : 3);
        await untilClockReaches(startAt);
        const accepted: number[] = [];
        while (Date.now() < expiresAt + 300) {
          const res = await answer(uuid);
          if (res.status === 200) accepted.push(Date.now());
          else expect([409, 410]).toContain(res.status);
          await res.body?.cancel();
        }
        return { uuid, accepted, expiresAt };
      }),
    );
    for (const { uuid, accepted, expiresAt } of results) {
      const record = await eventually(async () => {
        const r = await stored(uuid);
        return r?.status !== 'ACTIVE' ? r : undefined;
      });
      expect(accepted.length).toBeLessThanOrEqual(1);
      if (record?.status === 'UPDATED') {
        expect(accepted).toHaveLength(1);
        expect((record.answeredAt as Date).getTime()).toBeLessThan(expiresAt);
      } else {
        expect(record?.status).toBe('EXPIRED');
        expect(accepted).toHaveLength(0);
      }
    }
  });

  test('when the worker is stopped, then answers after expiresAt are 410; after a restart the sweep expires what lost its job, and retention deletes old ended notifications', async () => {
    await stopWorker();
    // Both fell due half a second ago (the service's clock is set back), with no worker to expire them.
    const answeredLate = await createDueIn(-500);
    const lostJob = await createDueIn(-500, { callbackUrl: receiver.url });
    expect(await service.ctx.queues.notification.remove(expiryJobId(lostJob))).toBe(1);
    const old = await create();
    expect((await answer(old)).status).toBe(200);
    await (await Notifications()).updateOne({ notificationUuid: old }, { $set: { answeredAt: new Date(Date.now() - 91 * 86_400_000) } });

    const late = await answer(answeredLate);
    expect(late.status).toBe(410);
    expect(await late.json()).toMatchObject({ message: 'Notification expired', code: 4 });
    expect((await stored(lostJob))?.status).toBe('ACTIVE');

    await startWorker();
    const swept = await eventually(
      async () => {
        const r = await stored(lostJob);
        return r?.status === 'EXPIRED' ? r : undefined;
      },
      5_000,
      20,
    );
    expect(swept.status).toBe('EXPIRED');
    const [call] = await eventually(async () => (callbacksFor(lostJob).length > 0 ? callbacksFor(lostJob) : undefined), 10_000);
    expect(JSON.parse(call.raw)).toMatchObject({ status: 'EXPIRED' });
    expect(signatureValid(callbackSecret, call.signature, call.raw)).toBe(true);
    expect(await eventually(async () => ((await stored(old)) === null ? true : undefined))).toBe(true);
  });

  test('when a user is deleted, then the pending notification is DISCARD and its callback says so', async () => {
    const { accessToken: hrToken } = await createClientThroughAdminApi(service, { name: 'hr', scopes: ['users'] });
    await insertUser(service.ctx.mongo, { userId: 'bob' });
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('bob', { callbackUrl: receiver.url }));
    const uuid = ((await res.json()) as { notification_uuid: string }).notification_uuid;
    expect((await fetch(`${service.url}/v1/users/bob`, { method: 'DELETE', headers: { authorization: `Bearer ${hrToken}` } })).status).toBe(
      204,
    );
    const [call] = await eventually(async () => (callbacksFor(uuid).length > 0 ? callbacksFor(uuid) : undefined), 10_000);
    expect(JSON.parse(call.raw)).toMatchObject({ notification_uuid: uuid, status: 'DISCARD', signing_status: 'NA' });
  });

  test('when a callback job ended failed without marking the callback (its runs stalled out, or the last mark could not be written), then the sweep sends the callback again', async () => {
    await stopWorker();
    const uuid = await create({ callbackUrl: receiver.url });
    expect((await answer(uuid, 'reject')).status).toBe(200);
    // The job ends in the failed set the way BullMQ fails a job whose runs stalled too often: no
    // run of the processor gets to mark the callback FAILED, so it stays WAITING.
    const queue = service.ctx.queues['notification-callback'];
    const connection = createWorkerRedis(service.config.redis);
    const stalledOut = new Worker(
      'notification-callback',
      () => Promise.reject(new UnrecoverableError('job stalled more than allowable limit')),
      { connection, prefix: service.config.queuePrefix },
    );
    try {
      expect(await jobEnded(queue, callbackJobId(uuid))).toBe('failed');
    } finally {
      await stalledOut.close();
      connection.disconnect();
    }
    // As it stands once the sweep's grace has passed since the answer.
    await (await Notifications()).updateOne({ notificationUuid: uuid }, { $set: { answeredAt: new Date(Date.now() - 60_000) } });
    expect((await stored(uuid))?.callbackState).toBe('WAITING');

    await startWorker();
    const [call] = await eventually(async () => (callbacksFor(uuid).length > 0 ? callbacksFor(uuid) : undefined), 10_000);
    expect(JSON.parse(call.raw)).toMatchObject({ notification_uuid: uuid, status: 'UPDATED', action: 'reject' });
    expect(signatureValid(callbackSecret, call.signature, call.raw)).toBe(true);
    await eventually(async () => ((await stored(uuid))?.callbackState === 'SENT' ? true : undefined));
  });

  test("when SIGTERM arrives while a callback is in flight, then none of the worker's queues takes a new job while it drains, and the process exits 0", async () => {
    // A receiver that holds its answer for 2 s: the callback is in flight when the signal comes.
    let arrived = 0;
    const slow = createServer((req, res) => {
      arrived += 1;
      req.resume();
      req.on('end', () => setTimeout(() => res.end(), 2000));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
    try {
      const uuid = await create({ callbackUrl: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow` });
      expect((await answer(uuid)).status).toBe(200);
      await eventually(async () => (arrived > 0 ? true : undefined));
      const draining = worker as WorkerProcess;
      draining.child.kill('SIGTERM');
      await waitForOutput(draining, 'shutting down');
      // Work queued after the signal is left for the next worker process.
      const pushQueue = service.ctx.queues['notification-push'];
      const lateUuid = randomUUID();
      await enqueuePushFanout(pushQueue, lateUuid);
      expect(await draining.exited).toEqual({ code: 0, signal: null });
      worker = undefined;
      expect(await pushQueue.getJobState(pushFanoutJobId(lateUuid))).toBe('waiting');
      await pushQueue.remove(pushFanoutJobId(lateUuid));
      expect((await stored(uuid))?.callbackState).toBe('SENT');
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
