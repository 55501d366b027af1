import { randomUUID } from 'node:crypto';
import { MAX_STREAMS_PER_USER } from '../../api/routes/me-notification-stream.js';
import { compareStreamIds } from '../../core/notifications/user-event-reader.js';
import { createWorkerRedis } from '../../core/platform/queues/redis-connection.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { findFreePort } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, notificationBody, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { openEventStream, type SseEvent } from '../support/sse-client.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

// The signed-in user's notification events as server-sent events, on whichever API process the
// stream reached: this test's own process and a second one started from its compiled entry.
describe('GET /v1/me/notifications/stream', () => {
  let service: TestService;
  let other: WorkerProcess;
  let otherUrl: string;
  let enterprise: string;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    service = await startTestService('notifstream');
    const port = await findFreePort();
    other = spawnProcessEntry('api/main.js', { ...service.env, PORT: String(port) });
    otherUrl = `http://127.0.0.1:${port}`;
    ({ accessToken: enterprise } = await createClientWithToken(service, { scopes: ['notifications'] }));
    const appClientId = await registerAppClient(service);
    tokens = {};
    for (const userId of ['streamer1', 'streamer2']) {
      await insertUser(service.ctx.mongo, { userId });
      tokens[userId] = await mintUserToken(service, { userId, clientId: appClientId });
    }
    await waitForOutput(other, 'API listening', 120000);
  });
  afterAll(async () => {
    other.child.kill('SIGTERM');
    await other.exited;
    await service.close();
  });

  const stream = (base: string, userId: string, lastEventId?: string) =>
    openEventStream(`${base}/v1/me/notifications/stream`, {
      authorization: `Bearer ${tokens[userId] as string}`,
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    });
  async function createFor(userId: string): Promise<string> {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(userId));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  }
  const dataOf = (event: SseEvent) => JSON.parse(event.data) as Record<string, unknown>;

  test('when a notification is created and answered through one process, then a stream on the other process gets created, then ended', async () => {
    const events = await stream(otherUrl, 'streamer1');
    try {
      expect(events.status).toBe(200);
      // The answer's head comes once that process listens: every event from now on reaches it.
      const uuid = await createFor('streamer1');
      const created = await events.next();
      expect(created).toMatchObject({ event: 'created', id: expect.stringMatching(/^\d+-\d+$/) });
      expect(dataOf(created)).toMatchObject({ type: 'created', notification_uuid: uuid, status: 'ACTIVE', expires_at: expect.any(String) });
      const answered = await sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', tokens.streamer1 as string, {
        response: 'accept',
      });
      expect(answered.status).toBe(200);
      const ended = await events.next();
      expect(ended.event).toBe('ended');
      expect(dataOf(ended)).toEqual({ type: 'ended', notification_uuid: uuid, status: 'UPDATED' });
    } finally {
      events.close();
    }
  });

  test("when another user's notification is created, then it is not on this user's stream", async () => {
    const events = await stream(service.url, 'streamer1');
    try {
      expect(service.ctx.userEvents.streams()).toBe(1);
      await createFor('streamer2');
      const mine = await createFor('streamer1');
      expect(dataOf(await events.next())).toMatchObject({ notification_uuid: mine });
    } finally {
      events.close();
    }
    await eventually(async () => (service.ctx.userEvents.streams() === 0 ? true : undefined));
  });

  test('when an event from before the stream opened reaches this process late, then it is not sent', async () => {
    // On a Redis Cluster a message can reach one node's subscribers after a stream opened on
    // another process; replaying the captured message stands for that.
    const listener = createWorkerRedis(service.ctx.config.redis);
    const messages: string[] = [];
    const channel = `${service.ctx.config.queuePrefix}:user-events`;
    listener.on('message', (from: string, message: string) => from === channel && messages.push(message));
    await listener.subscribe(channel);
    try {
      const before = await createFor('streamer1');
      const late = await eventually(async () => messages.find((m) => m.includes(before)));
      const events = await stream(service.url, 'streamer1');
      try {
        await service.ctx.redis.publish(channel, late);
        const mine = await createFor('streamer1');
        expect(dataOf(await events.next())).toMatchObject({ notification_uuid: mine });
      } finally {
        events.close();
      }
    } finally {
      listener.disconnect();
    }
  });

  test('when many events for one user are published at once, then the stream gets each one once, in id order', async () => {
    const events = await stream(service.url, 'streamer2');
    try {
      const uuids = Array.from({ length: 40 }, () => randomUUID());
      await Promise.all(
        uuids.map((uuid) =>
          service.ctx.userEvents.publish(DEFAULT_ENTERPRISE_ID, 'streamer2', {
            type: 'created',
            notification_uuid: uuid,
            status: 'ACTIVE',
          }),
        ),
      );
      const received: SseEvent[] = [];
      for (const _ of uuids) received.push(await events.next(5000));
      const ids = received.map((e) => e.id as string);
      expect([...ids].sort(compareStreamIds)).toEqual(ids);
      expect(new Set(ids).size).toBe(uuids.length);
      expect(received.map((e) => dataOf(e).notification_uuid).sort()).toEqual([...uuids].sort());
    } finally {
      events.close();
    }
  });

  test('when the client reconnects with Last-Event-ID, then it gets what it missed, in order, and nothing twice', async () => {
    const first = await stream(service.url, 'streamer2');
    const seen = await createFor('streamer2');
    const last = await first.next();
    expect(dataOf(last)).toMatchObject({ notification_uuid: seen });
    first.close();

    // While away: a new notification, cancelled by the enterprise.
    const missed = await createFor('streamer2');
    expect((await sendJson(`${otherUrl}/v1/notifications/${missed}/cancel`, 'POST', enterprise, {})).status).toBe(200);

    const again = await stream(otherUrl, 'streamer2', last.id);
    try {
      const replayed = [await again.next(), await again.next()].map((e) => [e.event, dataOf(e).notification_uuid, dataOf(e).status]);
      expect(replayed).toEqual([
        ['created', missed, 'ACTIVE'],
        ['ended', missed, 'CANCELLED'],
      ]);
      // Live events follow the replay.
      const live = await createFor('streamer2');
      expect(dataOf(await again.next())).toMatchObject({ type: 'created', notification_uuid: live });
    } finally {
      again.close();
    }
  });

  test('when Last-Event-ID has a part too large for a stream id, then the stream opens as without one', async () => {
    const events = await stream(service.url, 'streamer2', '5-99999999999999999999');
    try {
      expect(events.status).toBe(200);
      const live = await createFor('streamer2');
      expect(dataOf(await events.next())).toMatchObject({ type: 'created', notification_uuid: live });
    } finally {
      events.close();
    }
  });

  test('when one user opens more streams on one process than allowed, then the next is refused with 503 and Retry-After until one closes, and other users are not affected', async () => {
    const open = await Promise.all(Array.from({ length: MAX_STREAMS_PER_USER }, () => stream(service.url, 'streamer1')));
    try {
      expect(open.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_USER).fill(200));
      const refused = await fetch(`${service.url}/v1/me/notifications/stream`, {
        headers: { authorization: `Bearer ${tokens.streamer1 as string}`, accept: 'text/event-stream' },
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('3');
      expect(await refused.json()).toMatchObject({
        code: 39,
        message: `Too many open notification streams for this user (at most ${MAX_STREAMS_PER_USER}), try again later`,
      });
      const otherUser = await stream(service.url, 'streamer2');
      otherUser.close();
      expect(otherUser.status).toBe(200);

      open.shift()?.close();
      const again = await eventually(async () => {
        const attempt = await stream(service.url, 'streamer1');
        if (attempt.status === 200) return attempt;
        attempt.close();
        return undefined;
      });
      open.push(again);
    } finally {
      for (const s of open) s.close();
    }
  });

  test('when there is no user token, then 401 and no stream', async () => {
    const res = await fetch(`${service.url}/v1/me/notifications/stream`, { headers: { authorization: `Bearer ${enterprise}` } });
    expect(res.status).toBe(401);
  });
});
