import { Redis } from 'ioredis';
import { loadConfig } from '../../core/platform/config/config.js';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/local-redis-cluster.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

describe('a Redis Cluster master dies and its replica takes over', () => {
  let cluster: LocalRedisCluster;
  let service: TestService;
  let worker: RunningWorker;
  let token: string;
  const mobile = '+15550003434';
  const codeIn = (text: string) => /code is ([^ .]+)\./.exec(text)?.[1] ?? '';

  beforeAll(async () => {
    // A cluster of this file's own (3 masters with a replica each): a master is killed here.
    cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 1000 });
    service = await startTestService('redisfailover', { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_URL: '' });
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'fay', mobileNumber: mobile });
  }, 90000);
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
    await cluster.stop();
  });

  async function otpSentAndValidated(): Promise<void> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('fay'));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const code = codeIn((await outboxMessageFor(service, mobile, otpUuid)).text);
    const validation = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, token, { otp: code });
    expect(await validation.json()).toEqual({ otpUuid, status: 'SUCCESS' });
  }

  test('when one replica of the cluster may evict keys, then a worker refuses to start naming that node', async () => {
    const roles = await Promise.all(
      cluster.nodes.map(async (node) => {
        const client = new Redis(node.url);
        try {
          return { node, role: ((await client.call('ROLE')) as string[])[0] };
        } finally {
          client.disconnect();
        }
      }),
    );
    const replica = roles.find(({ role }) => role === 'slave')?.node;
    if (!replica) throw new Error('the cluster has no replica');
    const admin = new Redis(replica.url);
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    try {
      await expect(startDispatchWorker(loadConfig(service.env), memoryLogger().logger)).rejects.toThrow(
        `Redis maxmemory-policy must be noeviction (127.0.0.1:${replica.port} has volatile-lru)`,
      );
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });

  test('when the master of the queues is killed, then readiness names redis until the replica serves, and OTPs go through again', async () => {
    await otpSentAndValidated();
    const master = await cluster.masterFor(service.config.queuePrefix);
    await master.kill();

    const ready = async () => {
      const res = await fetch(`${service.url}/readyz`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    expect(await eventually(async () => ((await ready()).status === 503 ? ready() : undefined))).toMatchObject({
      status: 503,
      body: { status: 'unavailable', checks: { mongodb: 'up', redis: 'down' }, down: ['redis'] },
    });
    await cluster.waitUntilHealthy(30000);
    expect((await cluster.masterFor(service.config.queuePrefix)).port).not.toBe(master.port);
    expect(await eventually(async () => ((await ready()).status === 200 ? ready() : undefined), 30000)).toMatchObject({ status: 200 });

    await otpSentAndValidated();
  }, 90000);
});
