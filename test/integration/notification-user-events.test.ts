import {
  createNotificationUserEvents,
  userEventsKey,
  type NotificationUserEvents,
} from '../../core/notifications/notification-user-events.js';
import { createUserEventReader, type UserNotificationEvent } from '../../core/notifications/user-event-reader.js';
import { createProducerRedis, createWorkerRedis, type RedisClient } from '../../core/platform/queues/redis-connection.js';
import { startRedisServer } from '../../scripts/local-services.js';
import { closeSubscriberConnections } from '../support/redis-node.js';
import { eventually } from '../support/otp-helpers.js';
import { memoryLogger, testConfig } from '../support/test-service.js';

// The user events module on the run's Redis (a cluster in the cluster pass): what reaches an open
// stream when the pub/sub message that should wake it never comes.
describe('notification user events', () => {
  const config = testConfig('userevents');
  let redis: RedisClient;
  let events: NotificationUserEvents;
  const keyOf = (userId: string) => userEventsKey(config.queuePrefix, 'ent1', userId);
  const created = (uuid: string): UserNotificationEvent => ({ type: 'created', notification_uuid: uuid, status: 'ACTIVE' });
  const appendWithoutMessage = (userId: string, event: UserNotificationEvent) =>
    redis.xadd(keyOf(userId), '*', 'event', JSON.stringify(event)) as Promise<string>;

  beforeAll(() => {
    redis = createWorkerRedis(config.redis);
    events = createNotificationUserEvents({
      redis,
      openSubscriber: () => createWorkerRedis(config.redis),
      prefix: config.queuePrefix,
      logger: memoryLogger().logger,
      sweepMs: 200,
    });
  });
  afterAll(() => {
    events.close();
    redis.disconnect();
  });

  function collect(): { send: (id: string, event: UserNotificationEvent) => void; got: [string, string][] } {
    const got: [string, string][] = [];
    return { send: (id, event) => got.push([id, event.notification_uuid]), got };
  }

  test('when an event is appended but its message is lost, then the sweep sends it', async () => {
    const listener = collect();
    const stop = await events.open('ent1', 'lost', listener);
    try {
      const id = await appendWithoutMessage('lost', created('n-lost'));
      await eventually(async () => (listener.got.length > 0 ? true : undefined));
      expect(listener.got).toEqual([[id, 'n-lost']]);
    } finally {
      stop();
    }
  });

  test('when Redis closes the subscriber connection, then once the subscription is back every open stream reads, and sends an event whose message was lost, long before the sweep', async () => {
    const name = `userevents-${process.pid}-${Date.now()}`;
    const subscribers: RedisClient[] = [];
    // A sweep far away: only the read after the subscription is back can send the event.
    const own = createNotificationUserEvents({
      redis,
      openSubscriber: () => {
        const subscriber = createWorkerRedis(config.redis, { connectionName: name });
        subscribers.push(subscriber);
        return subscriber;
      },
      prefix: config.queuePrefix,
      logger: memoryLogger().logger,
      sweepMs: 600_000,
    });
    const admin = createWorkerRedis(config.redis);
    const listener = collect();
    try {
      const stop = await own.open('ent1', 'resubscribed', listener);
      // Appended while nothing wakes the stream, as when its message went by while the subscriber was away.
      const id = await appendWithoutMessage('resubscribed', created('n-resubscribed'));
      expect(await closeSubscriberConnections(admin, name)).toBe(1);
      await eventually(async () => (listener.got.length > 0 ? true : undefined), 5000);
      expect(listener.got).toEqual([[id, 'n-resubscribed']]);
      stop();
    } finally {
      own.close();
      admin.disconnect();
      for (const subscriber of subscribers) subscriber.disconnect();
    }
  });

  test('when a read fails, then it is tried again within seconds, with no message or sweep to wake it', async () => {
    const key = keyOf('retried');
    const listener = collect();
    const errors: Error[] = [];
    const reader = createUserEventReader({ redis, key, send: listener.send, onReadError: (err) => errors.push(err), retryFirstMs: 100 });
    await reader.start();
    try {
      // A string under the key makes the read fail on the real server (WRONGTYPE).
      await redis.set(key, 'not a stream');
      reader.wake();
      await eventually(async () => (errors.length > 0 ? true : undefined));
      expect(errors[0]?.message).toMatch(/WRONGTYPE/);
      await redis.del(key);
      const id = (await redis.xadd(key, '*', 'event', JSON.stringify(created('n-retried')))) as string;
      await eventually(async () => (listener.got.length > 0 ? true : undefined), 5000);
      expect(listener.got).toEqual([[id, 'n-retried']]);
    } finally {
      reader.stop();
      await redis.del(key);
    }
  });

  test('when a stream opens, then events from before it are not sent, and those after it are, once', async () => {
    await events.publish('ent1', 'fresh', created('n-before'));
    const listener = collect();
    const stop = await events.open('ent1', 'fresh', listener);
    try {
      await events.publish('ent1', 'fresh', created('n-after'));
      await eventually(async () => (listener.got.length > 0 ? true : undefined));
      // Only a sweep sends this one: once it is here, a sweep has read the stream again.
      await appendWithoutMessage('fresh', created('n-swept'));
      await eventually(async () => (listener.got.length >= 2 ? true : undefined));
      expect(listener.got.map(([, uuid]) => uuid)).toEqual(['n-after', 'n-swept']);
    } finally {
      stop();
    }
  });

  test('when Last-Event-ID is past the newest event, then the stream starts at the newest and later events still come', async () => {
    await events.publish('ent1', 'future', created('n-old'));
    const listener = collect();
    const stop = await events.open('ent1', 'future', { ...listener, lastEventId: `${Date.now() + 3_600_000}-0` });
    try {
      await events.publish('ent1', 'future', created('n-new'));
      await eventually(async () => (listener.got.length > 0 ? true : undefined));
      expect(listener.got.map(([, uuid]) => uuid)).toEqual(['n-new']);
    } finally {
      stop();
    }
  });

  test('when the stream holds entries this code did not write, then they are skipped and the events after them come', async () => {
    const seen = await appendWithoutMessage('foreign', created('n-seen'));
    await redis.xadd(keyOf('foreign'), '*', 'other', 'x');
    await redis.xadd(keyOf('foreign'), '*', 'event', 'not json');
    const id = await appendWithoutMessage('foreign', created('n-missed'));
    const listener = collect();
    // Resuming after the first: the read that replays what was missed meets the two others first.
    const stop = await events.open('ent1', 'foreign', { ...listener, lastEventId: seen });
    try {
      expect(listener.got).toEqual([[id, 'n-missed']]);
    } finally {
      stop();
    }
  });

  test('when a stream is stopped, then nothing more is sent to it and it no longer counts', async () => {
    const stopped = collect();
    const open = collect();
    const stop = await events.open('ent1', 'stopped', stopped);
    const stopOther = await events.open('ent1', 'stopped', open);
    try {
      expect(events.streams()).toBe(2);
      stop();
      expect(events.streams()).toBe(1);
      await events.publish('ent1', 'stopped', created('n-late'));
      await eventually(async () => (open.got.length > 0 ? true : undefined));
      await appendWithoutMessage('stopped', created('n-swept'));
      // The stream still open got both, the second through a sweep that ran after the stop.
      await eventually(async () => (open.got.length >= 2 ? true : undefined));
      expect(stopped.got).toEqual([]);
    } finally {
      stopOther();
    }
  });

  test('when Redis is down before the first stream opens, then opening is refused within seconds instead of waiting for Redis, and once it is back a stream opens and hears its events', async () => {
    // A Redis of its own, stopped before this process's subscription was ever made (a process started during an outage).
    let server = await startRedisServer();
    const target = { kind: 'single' as const, url: server.url };
    await server.stop();
    const own = createProducerRedis(target);
    own.on('error', () => undefined);
    const early = createNotificationUserEvents({
      redis: own,
      openSubscriber: () => createWorkerRedis(target),
      prefix: config.queuePrefix,
      logger: memoryLogger().logger,
      sweepMs: 200,
    });
    try {
      // Refused within a few seconds (the wait for the first subscription is bounded), not held until Redis answers.
      let outcome = 'waiting';
      void early.open('ent1', 'early', collect()).then(
        () => (outcome = 'opened'),
        () => (outcome = 'refused'),
      );
      expect(await eventually(async () => (outcome === 'waiting' ? undefined : outcome), 5000)).toBe('refused');
      expect(early.streams()).toBe(0);

      server = await startRedisServer({ port: server.port });
      await eventually(async () => (own.status === 'ready' ? true : undefined));
      const listener = collect();
      const stop = await eventually(async () => early.open('ent1', 'early', listener).catch(() => undefined));
      try {
        expect(await early.publish('ent1', 'early', created('n-early'))).toBe(true);
        await eventually(async () => (listener.got.length > 0 ? true : undefined));
        expect(listener.got.map(([, uuid]) => uuid)).toEqual(['n-early']);
      } finally {
        stop();
      }
    } finally {
      early.close();
      own.disconnect();
      await server.stop();
    }
  }, 30000);

  test('when Redis is down for a while, then one warning per sweep period says how many reads and opens failed, and events come again once it is back', async () => {
    // A Redis of its own to stop and start again, reached as the API reaches Redis (failing fast).
    let server = await startRedisServer();
    const target = { kind: 'single' as const, url: server.url };
    const own = createProducerRedis(target);
    own.on('error', () => undefined);
    const { logger, lines } = memoryLogger();
    const cut = createNotificationUserEvents({
      redis: own,
      openSubscriber: () => createWorkerRedis(target),
      prefix: config.queuePrefix,
      logger,
      sweepMs: 200,
    });
    // A second process's user events with no stream open, its subscription in place: only refused opens fail there.
    const second = memoryLogger();
    const idle = createNotificationUserEvents({
      redis: own,
      openSubscriber: () => createWorkerRedis(target),
      prefix: config.queuePrefix,
      logger: second.logger,
      sweepMs: 200,
    });
    try {
      // As the API does before it serves: a fail-fast connection refuses commands until it is ready.
      await eventually(async () => (own.status === 'ready' ? true : undefined));
      (await idle.open('ent1', 'idle', collect()))();
      const listener = collect();
      await cut.open('ent1', 'outage', listener);
      // Nineteen more streams, so that each sweep fails twenty reads.
      for (let i = 0; i < 19; i++) await cut.open('ent1', `outage-${i}`, collect());
      await server.stop();
      const warnings = () => lines().filter((line) => line.msg === 'user events: reads failed (the next wake-up reads again)');
      await eventually(async () => (warnings().length >= 2 ? true : undefined));
      // Unthrottled, each warning would say 1; a read under way when Redis stopped may fail later than the sweep's others.
      expect(warnings()[1]?.failedReads).toBeGreaterThanOrEqual(10);

      // Clients opening streams meanwhile are refused and counted in the same warnings, not logged one line each.
      const refusals = () => second.lines().filter((line) => line.msg === 'user events: reads failed (the next wake-up reads again)');
      const startedAt = Date.now();
      for (let i = 0; i < 30; i++) await expect(idle.open('ent1', `refused-${i}`, collect())).rejects.toThrow();
      // At most one warning per sweep period (200 ms) while they were refused, however slow the
      // machine made the 30 opens; unthrottled there would be one per open.
      expect(refusals().length).toBeLessThanOrEqual(Math.ceil((Date.now() - startedAt) / 200) + 1);
      const failedReads = () => refusals().reduce((sum, line) => sum + Number(line.failedReads), 0);
      await eventually(async () => {
        await expect(idle.open('ent1', 'refused-again', collect())).rejects.toThrow();
        return failedReads() >= 31 ? true : undefined;
      });
      expect(refusals().length).toBeLessThan(31);
      expect(idle.streams()).toBe(0);

      server = await startRedisServer({ port: server.port });
      await eventually(async () => (own.status === 'ready' ? true : undefined));
      // Appended with no message: only a sweep's read can send it.
      const id = (await own.xadd(keyOf('outage'), '*', 'event', JSON.stringify(created('n-back')))) as string;
      await eventually(async () => (listener.got.length > 0 ? true : undefined));
      expect(listener.got).toEqual([[id, 'n-back']]);
    } finally {
      idle.close();
      cut.close();
      own.disconnect();
      await server.stop();
    }
  });
});
