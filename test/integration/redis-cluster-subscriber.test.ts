import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createSigningKeyChanges, publishSigningKeyChange, signingKeyChangesChannel } from '../../core/auth/signing-key-changes.js';
import type { RedisTarget } from '../../core/platform/config/config.js';
import { createProducerRedis, createWorkerRedis, type RedisClient } from '../../core/platform/queues/redis-connection.js';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/local-redis-cluster.js';
import { eventually } from '../support/waiting.js';
import { memoryLogger } from '../support/test-service.js';

describe('a Redis Cluster node that holds a subscription dies', () => {
  let cluster: LocalRedisCluster;
  const opened: RedisClient[] = [];

  beforeAll(async () => {
    // A cluster of this file's own (3 masters): one of its nodes is killed here.
    cluster = await startRedisCluster();
  }, 60000);
  afterAll(async () => {
    for (const redis of opened) redis.disconnect();
    await cluster.stop();
  });

  /** A connection of this test's, closed after the file; its errors (nodes down on purpose) are expected. */
  const connect = (redis: RedisClient) => {
    redis.on('error', () => undefined);
    opened.push(redis);
    return redis;
  };

  /** The connections of one node that hold a subscription and carry `name` (as theirs or after a prefix of the client's). */
  async function subscribersOn(port: number, name: string): Promise<number> {
    const admin = new Redis({ host: '127.0.0.1', port });
    try {
      const lines = String(await admin.client('LIST')).split('\n');
      return lines.filter((line) => line.includes(`${name} `) && line.includes(' sub=1 ')).length;
    } finally {
      admin.disconnect();
    }
  }

  test('when no node of the cluster answers, then the first wait for the subscription is refused within seconds, as on one Redis that is down', async () => {
    // Ports nothing listens on: the cluster of a process started while every node is down.
    const freePort = () =>
      new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as AddressInfo;
          server.close(() => resolve(port));
        });
      });
    const target: RedisTarget = { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: await freePort() }] };
    const changes = createSigningKeyChanges({
      redis: connect(createProducerRedis(target)),
      openSubscriber: () => connect(createWorkerRedis(target)),
      channel: signingKeyChangesChannel('{subscriberdown}'),
      logger: memoryLogger().logger,
    });
    try {
      // Refused within a few seconds (the wait for the first subscription is bounded), not held until Redis answers.
      let outcome = 'waiting';
      void changes
        .listen(() => undefined)
        .then(
          () => (outcome = 'subscribed'),
          () => (outcome = 'refused'),
        );
      expect(await eventually(async () => (outcome === 'waiting' ? undefined : outcome), 5000)).toBe('refused');
    } finally {
      changes.close();
    }
  }, 30000);

  test('when the node holding the subscription is killed, then the subscription moves to another node, the listener is called again and hears the next notices there', async () => {
    const target: RedisTarget = { kind: 'cluster', nodes: cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })) };
    const name = `keychanges-${process.pid}-${Date.now()}`;
    const channel = signingKeyChangesChannel('{subscriberfailover}');
    const changes = createSigningKeyChanges({
      redis: connect(createProducerRedis(target)),
      openSubscriber: () => connect(createWorkerRedis(target, { connectionName: name })),
      channel,
      logger: memoryLogger().logger,
    });
    try {
      let heard = 0;
      await changes.listen(() => (heard += 1));
      expect(heard).toBe(1);
      const counts = await Promise.all(cluster.nodes.map((node) => subscribersOn(node.port, name)));
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(1);
      const holder = cluster.nodes[counts.indexOf(1)];
      if (!holder) throw new Error('no node holds the subscription');

      await holder.kill();
      await eventually(async () => (heard === 2 ? true : undefined), 10000);
      const survivors = cluster.nodes.filter((node) => node !== holder);
      const moved = await Promise.all(survivors.map((node) => subscribersOn(node.port, name)));
      expect(moved.reduce((sum, count) => sum + count, 0)).toBe(1);

      // A notice published through a node that is still up (PUBLISH takes no key: a cluster whose
      // slots are not all served still passes it on).
      const publisher = new Redis({ host: '127.0.0.1', port: survivors[0]?.port });
      try {
        await publishSigningKeyChange(publisher, channel);
      } finally {
        publisher.disconnect();
      }
      await eventually(async () => (heard === 3 ? true : undefined), 3000);
    } finally {
      changes.close();
    }
  }, 30000);
});
