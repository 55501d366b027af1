import { createSigningKeyChanges, signingKeyChangesChannel, type SigningKeyChanges } from '../../core/auth/signing-key-changes.js';
import type { RedisOptions } from 'ioredis';
import { createProducerRedis, createWorkerRedis, waitForRedis, type RedisClient } from '../../core/platform/queues/redis-connection.js';
import { closeSubscriberConnections } from '../support/redis-node.js';
import { eventually } from '../support/waiting.js';
import { memoryLogger, testConfig } from '../support/test-service.js';

// The "signing keys changed" notice on the run's Redis (a cluster in the cluster pass): who hears
// it, and what a process does when its subscription drops and a notice may have gone by.
describe('signing key changes', () => {
  const config = testConfig('keychanges');
  const opened: RedisClient[] = [];
  const changes: SigningKeyChanges[] = [];
  const connect = (factory: typeof createWorkerRedis, target = config.redis, options: RedisOptions = {}) => {
    const redis = factory(target, options);
    redis.on('error', () => undefined);
    opened.push(redis);
    return redis;
  };
  /** One process's notice: its command connection (fail-fast, as the API's) and its subscriber (kept, so a test can drop it). */
  function processChanges(
    prefix = config.queuePrefix,
    connectionName?: string,
  ): { changes: SigningKeyChanges; commands: RedisClient; subscriber: () => RedisClient | undefined } {
    let subscriber: RedisClient | undefined;
    const commands = connect(createProducerRedis);
    const made = createSigningKeyChanges({
      redis: commands,
      openSubscriber: () => (subscriber = connect(createWorkerRedis, config.redis, connectionName ? { connectionName } : {})),
      channel: signingKeyChangesChannel(prefix),
      logger: memoryLogger().logger,
    });
    changes.push(made);
    return { changes: made, commands, subscriber: () => subscriber };
  }

  afterAll(() => {
    for (const made of changes) made.close();
    for (const redis of opened) redis.disconnect();
  });

  test('when a change is announced, then every process of the deployment hears it once, and another deployment on the same Redis does not', async () => {
    const [a, b, other] = [processChanges(), processChanges(), processChanges(`${config.queuePrefix}-other`)];
    const heard = { a: 0, b: 0, other: 0 };
    await Promise.all([
      a.changes.listen(() => (heard.a += 1)),
      b.changes.listen(() => (heard.b += 1)),
      other.changes.listen(() => (heard.other += 1)),
    ]);
    // Each was called once when its subscription was made.
    expect(heard).toEqual({ a: 1, b: 1, other: 1 });
    // The announcer's fail-fast connection refuses to publish until it is connected (on a cluster:
    // has read the slot map); being subscribed says nothing about it.
    expect(await waitForRedis(a.commands)).toBe(true);
    expect(await a.changes.announce()).toBe(true);
    await eventually(async () => (heard.a === 2 && heard.b === 2) || undefined, 3000);
    // A notice of the same deployment would have reached `other` with them; it has had the time.
    expect(heard.other).toBe(1);
  });

  // On a cluster the subscription's connection is not the client's: it never reconnects, it moves
  // to another node when it ends (the next test).
  const onOneRedis = config.redis.kind === 'single' ? test : test.skip;

  onOneRedis(
    'when the subscriber connection drops and comes back, then the listener is called again (a notice may have gone by while it was down) and hears the next notices',
    async () => {
      const listener = processChanges();
      const announcer = processChanges();
      let heard = 0;
      await listener.changes.listen(() => (heard += 1));
      expect(heard).toBe(1);
      // A dropped connection that ioredis reconnects: pub/sub kept nothing sent meanwhile.
      (listener.subscriber() as RedisClient).disconnect(true);
      await eventually(async () => (heard === 2 ? true : undefined), 5000);
      expect(await announcer.changes.announce()).toBe(true);
      await eventually(async () => (heard === 3 ? true : undefined), 3000);
    },
  );

  test('when Redis closes the subscriber connection (a subscriber past its output buffer limit, a node going away), then the listener is called again and hears the next notices', async () => {
    const name = `keychanges-${process.pid}-${Date.now()}`;
    const listener = processChanges(config.queuePrefix, name);
    const announcer = processChanges();
    let heard = 0;
    await listener.changes.listen(() => (heard += 1));
    expect(heard).toBe(1);
    // Closed by the server, as Redis does: on a cluster the subscription has a connection of its
    // own to one node, which is replaced by one to another node.
    const killed = await closeSubscriberConnections(connect(createWorkerRedis), name);
    expect(killed).toBe(1);
    await eventually(async () => (heard === 2 ? true : undefined), 5000);
    // Its fail-fast connection refuses to publish until it is connected (on a cluster: has read the slot map).
    expect(await waitForRedis(announcer.commands)).toBe(true);
    expect(await announcer.changes.announce()).toBe(true);
    await eventually(async () => (heard === 3 ? true : undefined), 3000);
  });

  test('when Redis does not take the notice, then announce says so without throwing', async () => {
    const unreachable = createSigningKeyChanges({
      redis: connect(createProducerRedis, { kind: 'single', url: 'redis://127.0.0.1:9' }),
      openSubscriber: () => connect(createWorkerRedis),
      channel: signingKeyChangesChannel(config.queuePrefix),
      logger: memoryLogger().logger,
    });
    changes.push(unreachable);
    expect(await unreachable.announce()).toBe(false);
  });
});
