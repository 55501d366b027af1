import { createProducerRedis, waitForRedis, type RedisClient } from '../../core/platform/queues/redis-connection.js';
import type { RedisTarget } from '../../core/platform/config/config.js';
import { testConfig } from './test-service.js';

export interface RunRedis {
  redis: RedisClient;
  /** The run's key prefix (with the hash tag on a cluster), unique to `label`. */
  prefix: string;
}

/**
 * A connection to the run's Redis (the cluster, in the cluster pass) for a suite that tests a Redis
 * mechanism on its own: made and awaited ready before the suite's tests (until then an in-process
 * stand-in or an offline queue would answer instead), closed after them.
 */
export function useRunRedis(label: string, connect: (target: RedisTarget) => RedisClient = createProducerRedis): RunRedis {
  const run = {} as RunRedis;
  beforeAll(async () => {
    const config = testConfig(label);
    run.prefix = config.queuePrefix;
    run.redis = connect(config.redis);
    expect(await waitForRedis(run.redis)).toBe(true);
  });
  afterAll(() => {
    run.redis.disconnect();
  });
  return run;
}
