import { Cluster } from 'ioredis';
import { loadConfig } from '../../core/platform/config/config.js';
import { openWorkerResources } from '../../core/platform/lifecycle/worker-resources.js';
import { prepareStoreAtStart } from '../../core/migrations/store-check.js';
import { dataNodes } from '../../core/platform/queues/redis-connection.js';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/local-redis-cluster.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

describe('on a Redis Cluster', () => {
  let own: LocalRedisCluster | undefined;
  let service: TestService;
  let token: string;
  const mobile = '+15550001212';

  beforeAll(async () => {
    // The cluster pass gives the run's cluster; the single-Redis pass starts one for this file.
    const seeds = process.env.TEST_REDIS_CLUSTER_NODES ?? (own = await startRedisCluster()).seeds;
    service = await startTestService('rediscluster', { REDIS_CLUSTER_NODES: seeds, REDIS_URL: '' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'clara', mobileNumber: mobile });
  }, 60000);
  afterAll(async () => {
    await service.close();
    await own?.stop();
  });

  test('when REDIS_CLUSTER_NODES is set, then the API talks to the cluster and every key prefix is one hash tag', () => {
    expect(service.ctx.redis).toBeInstanceOf(Cluster);
    expect(service.config.queuePrefix).toMatch(/^\{rediscluster_[0-9a-f]{8}\}$/);
    expect(dataNodes(service.ctx.redis)).toHaveLength(3);
  });

  // A worker takes jobs as soon as it runs, and its journal and queues use the fail-fast
  // connection: one that is still reading the slot map refuses their commands.
  test('when a worker opens its stores, then its fail-fast connection is ready before it takes work', async () => {
    const resources = await openWorkerResources(loadConfig(service.env), memoryLogger().logger, prepareStoreAtStart);
    try {
      expect(resources.redis).toBeInstanceOf(Cluster);
      expect(resources.redis.status).toBe('ready');
    } finally {
      for (const step of resources.closeSteps) await step.run();
    }
  });

  test('when an OTP goes through the worker, then it is sent and every key it left (queue, limits) sits in the one slot of the hash tag', async () => {
    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('clara'));
      expect(res.status).toBe(200);
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      expect(await outboxMessageFor(service, mobile, otpUuid)).toBeDefined();
      await eventually(async () => ((await service.ctx.queues.dispatch.getJobCounts('completed')).completed === 1 ? true : undefined));
    } finally {
      await worker.shutdown();
    }
    const keys = (await Promise.all(dataNodes(service.ctx.redis).map((node) => node.keys(`${service.config.queuePrefix}:*`)))).flat();
    expect(keys).toEqual(
      expect.arrayContaining([
        `${service.config.queuePrefix}:dispatch:meta`,
        `${service.config.queuePrefix}:dispatch:completed`,
        expect.stringMatching(/:rl:otpPerUser:/),
      ]),
    );
    const slots = new Set(await Promise.all(keys.map((key) => service.ctx.redis.call('CLUSTER', 'KEYSLOT', key))));
    expect(slots.size).toBe(1);
  });
});
