import { Redis } from 'ioredis';
import { startRedisServer, type LocalService } from '../../scripts/local-services.js';
import { startTestService, testEnv } from '../support/test-service.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

const refusal = (port: number) =>
  `Redis maxmemory-policy must be noeviction (127.0.0.1:${port} has allkeys-lru): any other policy lets Redis delete queued jobs, ` +
  'sent-message records and rate-limit counters when memory runs short.';

describe('a Redis that may evict keys', () => {
  let redis: LocalService;
  let admin: Redis;
  beforeAll(async () => {
    // A Redis of this file's own: its eviction policy is changed here.
    redis = await startRedisServer({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.stop();
  });

  test.each(['workers/dispatch/main.js', 'workers/enrollment/main.js', 'workers/notifications/main.js'])(
    'when %s starts on a Redis whose maxmemory-policy is not noeviction, then it refuses to start and says why',
    async (entry) => {
      const worker = spawnProcessEntry(entry, testEnv('evictingworker', { REDIS_URL: redis.url }));
      expect(await worker.exited).toEqual({ code: 1, signal: null });
      expect(worker.output()).toContain(refusal(redis.port));
      expect(worker.output()).not.toContain('worker running');
    },
  );

  test('when the API starts on it, then it warns with the same reason and serves', async () => {
    const service = await startTestService('evictingapi', { REDIS_URL: redis.url });
    try {
      const warning = service.logLines().find((line) => String(line.msg).startsWith('Redis maxmemory-policy must be noeviction'));
      expect(warning).toMatchObject({ level: 40, msg: expect.stringContaining(refusal(redis.port)) });
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  test('when the policy is set to noeviction, then the worker starts and the API does not warn', async () => {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    try {
      const worker = spawnProcessEntry('workers/dispatch/main.js', testEnv('noevictionworker', { REDIS_URL: redis.url }));
      await waitForOutput(worker, 'dispatch worker running');
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      const service = await startTestService('noevictionapi', { REDIS_URL: redis.url });
      await service.close();
      expect(service.logLines().filter((line) => String(line.msg).includes('maxmemory-policy'))).toEqual([]);
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    }
  });
});
