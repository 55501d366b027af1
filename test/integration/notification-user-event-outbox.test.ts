import { randomUUID } from 'node:crypto';
import { appendUserEvent, userEventsKey } from '../../core/notifications/notification-user-events.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import type { UserNotificationEvent } from '../../core/notifications/user-event-reader.js';
import { createUserEventOutbox, USER_EVENT_GRACE_MS, USER_EVENT_LEASE_MS } from '../../core/notifications/user-event-outbox.js';
import { userEventsSwept } from '../../core/platform/metrics/business-metrics.js';
import { createProducerRedis } from '../../core/platform/queues/redis-connection.js';
import { findFreePort } from '../../scripts/local-services.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

/**
 * Each notification change is stored with its user event marked due; the event is appended
 * after the write and the mark cleared. These tests leave marks behind as a process that died
 * between the two would, and check that the notification worker's sweep appends their events.
 */
describe('user events owed by notification changes', () => {
  let service: TestService;
  const ENTERPRISE = 'default';
  beforeAll(async () => {
    service = await startTestService('usereventoutbox');
  });
  afterAll(async () => {
    await service.close();
  });

  const notifications = () => service.ctx.mongo.collection('notifications');
  const eventsOf = async (userId: string) =>
    (await service.ctx.redis.xrange(userEventsKey(service.config.queuePrefix, ENTERPRISE, userId), '-', '+')).map(
      ([, fields]) => JSON.parse(fields[1] ?? '') as Record<string, unknown>,
    );
  /** A stored record with its event still owed, as a process that died before appending it leaves it. */
  async function leaveMarked(userId: string, fields: Partial<Notification> & { userEventDueAt: Date }): Promise<string> {
    const uuid = randomUUID();
    const createdAt = new Date(Date.now() - 60_000);
    await notifications().insertOne({
      _id: uuid as never,
      notificationUuid: uuid,
      enterpriseId: ENTERPRISE,
      clientId: 'c1',
      userId,
      body: [{ lng: 'en', subject: 's', message: 'm' }],
      actions: [{ label: 'Accept', action: 'ACCEPT', authlevel: 'NONE' }],
      dsRequired: false,
      numberAttempts: 0,
      status: 'ACTIVE',
      signingStatus: 'NA',
      isDsVerified: false,
      createdAt,
      expiresAt: new Date(Date.now() + 300_000),
      ...fields,
    });
    return uuid;
  }
  const markOf = async (uuid: string) => (await notifications().findOne({ _id: uuid as never }))?.userEventDueAt as Date | undefined;
  const sweptCounts = async () => {
    const { values } = await userEventsSwept.get();
    const of = (outcome: string) => values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    return { appended: of('appended'), failed: of('failed'), dropped: of('dropped') };
  };
  const outboxOn = (append: (enterpriseId: string, userId: string, event: UserNotificationEvent) => Promise<boolean>) =>
    createUserEventOutbox({ repository: createNotificationsRepository(service.ctx.mongo), append, logger: memoryLogger().logger });

  test('when a notification is created and answered through the API, then each event is appended and no mark is left', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['notifications'] });
    await insertUser(service.ctx.mongo, { userId: 'outbox-api' });
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', accessToken, notificationBody('outbox-api'));
    expect(res.status).toBe(201);
    const { notification_uuid: uuid } = (await res.json()) as { notification_uuid: string };
    const cancel = await sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', accessToken, {});
    expect(cancel.status).toBeLessThan(300);

    await eventually(async () => ((await eventsOf('outbox-api')).length === 2 ? true : undefined));
    expect(await eventsOf('outbox-api')).toMatchObject([
      { type: 'created', notification_uuid: uuid },
      { type: 'ended', notification_uuid: uuid, status: 'CANCELLED' },
    ]);
    await eventually(async () => ((await markOf(uuid)) === undefined ? true : undefined));
  });

  test('when marks are older than the grace period, then the sweep appends what each still owes and clears them all', async () => {
    const old = new Date(Date.now() - USER_EVENT_GRACE_MS - 1000);
    const answeredAt = new Date(Date.now() - USER_EVENT_GRACE_MS - 500);
    const pending = await leaveMarked('outbox-sweep', { userEventDueAt: old });
    const accepted = await leaveMarked('outbox-sweep', { status: 'UPDATED', answeredAt, userEventDueAt: answeredAt });
    // Expiry never sends an event, nor does a created one announce what has expired since.
    const expired = await leaveMarked('outbox-sweep', { status: 'EXPIRED', answeredAt, userEventDueAt: old });
    const lapsed = await leaveMarked('outbox-sweep', { expiresAt: new Date(Date.now() - 1000), userEventDueAt: old });
    // Nor is an end announced after the user's stream would have been dropped (a mark that kept failing for a day).
    const dayOld = new Date(Date.now() - 25 * 3600_000);
    const stale = await leaveMarked('outbox-sweep', { status: 'DISMISSED', answeredAt: dayOld, userEventDueAt: old });
    // Within the grace period: the API that wrote it may be appending it right now.
    const recent = await leaveMarked('outbox-sweep', { userEventDueAt: new Date() });

    const outbox = outboxOn(async (enterpriseId, userId, event) => {
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, enterpriseId, userId, event);
      return true;
    });
    const swept = await outbox.sweep();

    expect(swept).toEqual({ appended: 2, failed: 0 });
    expect(await eventsOf('outbox-sweep')).toEqual([
      { type: 'created', notification_uuid: pending, status: 'ACTIVE', expires_at: expect.any(String) as string },
      { type: 'ended', notification_uuid: accepted, status: 'UPDATED' },
    ]);
    for (const uuid of [pending, accepted, expired, lapsed, stale]) expect(await markOf(uuid)).toBeUndefined();
    expect(await markOf(recent)).toBeInstanceOf(Date);
    // A sweep takes every mark of the collection: left here, this one is due to the next test's sweep
    // once the grace period has passed (its 1,200 inserts take longer than that on a loaded machine).
    await notifications().deleteOne({ _id: recent as never });
  });

  test('when more marks are owed than one batch holds, then one sweep clears them all', async () => {
    const old = new Date(Date.now() - USER_EVENT_GRACE_MS - 1000);
    const uuids: string[] = [];
    for (let i = 0; i < 1200; i += 1) uuids.push(await leaveMarked(`outbox-backlog-${i % 7}`, { userEventDueAt: old }));
    const outbox = outboxOn(async (enterpriseId, userId, event) => {
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, enterpriseId, userId, event);
      return true;
    });

    expect(await outbox.sweep()).toEqual({ appended: 1200, failed: 0 });
    expect(await notifications().countDocuments({ _id: { $in: uuids as never[] }, userEventDueAt: { $exists: true } })).toBe(0);
  }, 60000);

  test('when two notification workers sweep at once, then each owed event is appended once', async () => {
    const old = new Date(Date.now() - USER_EVENT_GRACE_MS - 1000);
    const uuids: string[] = [];
    for (let i = 0; i < 300; i += 1) uuids.push(await leaveMarked(`outbox-pair-${i % 5}`, { userEventDueAt: old }));
    const appendsOf = new Map<string, number>();
    // Each append yields, as a network round trip does, so that the two sweeps interleave.
    const counting = async (_enterpriseId: string, _userId: string, event: UserNotificationEvent) => {
      await new Promise((resolve) => setImmediate(resolve));
      appendsOf.set(event.notification_uuid, (appendsOf.get(event.notification_uuid) ?? 0) + 1);
      return true;
    };

    const [first, second] = await Promise.all([outboxOn(counting).sweep(), outboxOn(counting).sweep()]);

    expect(first.appended + second.appended).toBe(300);
    expect(uuids.filter((uuid) => appendsOf.get(uuid) !== 1)).toEqual([]);
    expect(await notifications().countDocuments({ _id: { $in: uuids as never[] }, userEventDueAt: { $exists: true } })).toBe(0);
  }, 60000);

  test('when the oldest marks keep failing, then the marks behind them are still appended', async () => {
    const oldest = new Date(Date.now() - USER_EVENT_GRACE_MS - 60_000);
    const old = new Date(Date.now() - USER_EVENT_GRACE_MS - 1000);
    const failing = new Set<string>();
    for (let i = 0; i < 500; i += 1) failing.add(await leaveMarked('outbox-poisoned', { userEventDueAt: oldest }));
    const behind: string[] = [];
    for (let i = 0; i < 20; i += 1) behind.push(await leaveMarked('outbox-behind', { userEventDueAt: old }));
    const outbox = outboxOn(async (enterpriseId, userId, event) => {
      if (failing.has(event.notification_uuid)) throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, enterpriseId, userId, event);
      return true;
    });

    const sweptBefore = await sweptCounts();
    expect(await outbox.sweep()).toEqual({ appended: 20, failed: 500 });
    // Counted for the operators' alert on events that cannot be appended.
    const sweptAfter = await sweptCounts();
    expect({ appended: sweptAfter.appended - sweptBefore.appended, failed: sweptAfter.failed - sweptBefore.failed }).toEqual({
      appended: 20,
      failed: 500,
    });
    expect((await eventsOf('outbox-behind')).map((e) => e.notification_uuid).sort()).toEqual([...behind].sort());
    // Still owed, and not looked at again before their lease runs out.
    for (const uuid of [...failing].slice(0, 3)) expect(await markOf(uuid)).toBeInstanceOf(Date);
    expect(await outbox.sweep()).toEqual({ appended: 0, failed: 0 });
  }, 60000);

  test('when Redis refuses the append, then the mark stays and its event is appended once its lease ends', async () => {
    const uuid = await leaveMarked('outbox-refused', { userEventDueAt: new Date(Date.now() - USER_EVENT_GRACE_MS - 1000) });
    // Nothing listens on this port: the fail-fast connection refuses every command.
    const unreachable = createProducerRedis({ kind: 'single', url: `redis://127.0.0.1:${await findFreePort()}` });
    unreachable.on('error', () => undefined);
    try {
      const outbox = outboxOn(async (enterpriseId, userId, event) => {
        await appendUserEvent(unreachable, service.config.queuePrefix, enterpriseId, userId, event);
        return true;
      });
      const swept = await outbox.sweep();
      expect(swept.failed).toBeGreaterThanOrEqual(1);
      expect(await markOf(uuid)).toBeInstanceOf(Date);
      expect(await eventsOf('outbox-refused')).toEqual([]);
    } finally {
      unreachable.disconnect();
    }
    // With Redis back, the mark waits out its lease, then its event is appended.
    const healthy = outboxOn(async (enterpriseId, userId, event) => {
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, enterpriseId, userId, event);
      return true;
    });
    expect(await healthy.sweep()).toEqual({ appended: 0, failed: 0 });
    // (Other tests' leased marks come due at that time too.)
    const later = await healthy.sweep(new Date(Date.now() + USER_EVENT_LEASE_MS + USER_EVENT_GRACE_MS + 1000));
    expect(later.appended).toBeGreaterThanOrEqual(1);
    expect(await eventsOf('outbox-refused')).toMatchObject([{ type: 'created', notification_uuid: uuid }]);
    expect(await markOf(uuid)).toBeUndefined();
  });

  test('when the API stops, then the marks it gathered are cleared at once, not left for the worker to send again', async () => {
    const uuid = await leaveMarked('outbox-flush', { userEventDueAt: new Date(0) });
    await notifications().updateOne({ _id: uuid as never }, { $set: { createdAt: new Date(0) } });
    const record = await createNotificationsRepository(service.ctx.mongo).find(uuid);
    const outbox = outboxOn(async () => true);

    await outbox.send(record as Notification, { type: 'created', notification_uuid: uuid, status: 'ACTIVE' });
    expect(await markOf(uuid)).toEqual(new Date(0));
    await outbox.flush();
    expect(await markOf(uuid)).toBeUndefined();
  });

  test('when a later change marked its own event, then clearing the earlier mark leaves it', async () => {
    const createdAt = new Date(Date.now() - 5000);
    const answeredAt = new Date();
    const uuid = await leaveMarked('outbox-race', { status: 'DISMISSED', createdAt, answeredAt, userEventDueAt: answeredAt });
    await createNotificationsRepository(service.ctx.mongo).clearUserEventsDue([{ notificationUuid: uuid, dueAt: createdAt }]);
    expect(await markOf(uuid)).toEqual(answeredAt);
  });

  test('when the notification worker runs, then it appends an event its API never appended', async () => {
    const uuid = await leaveMarked('outbox-worker', { userEventDueAt: new Date(Date.now() - 60_000) });
    const worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    try {
      await waitForOutput(worker, 'notification-callback worker running', 120000);
      const [event] = await eventually(async () => {
        const events = await eventsOf('outbox-worker');
        return events.length > 0 ? events : undefined;
      }, 20000);
      expect(event).toMatchObject({ type: 'created', notification_uuid: uuid });
      await eventually(async () => ((await markOf(uuid)) === undefined ? true : undefined));
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  }, 60000);
});
