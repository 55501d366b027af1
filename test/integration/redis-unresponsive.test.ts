import { loadConfig } from '../../core/platform/config/config.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, readOutbox } from '../support/otp-helpers.js';
import { startServiceOnOwnRedis, type ServiceOnOwnRedis } from '../support/own-redis.js';
import { memoryLogger } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * A Redis that stops answering but keeps its connections open (a stopped process, a network
 * partition that drops packets): nothing tells the client it is gone, so only the API's command
 * timeout turns it into the outage the service already handles.
 */
describe('a Redis that stops answering without closing its connection', () => {
  let service: ServiceOnOwnRedis;
  let token: string;

  beforeAll(async () => {
    service = await startServiceOnOwnRedis('redishang', {
      RATE_LIMIT_OTP_PER_USER: '1000',
      REDIS_COMMAND_TIMEOUT_MS: '300',
    });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'hung', mobileNumber: '+15550007101' });
  });
  afterAll(async () => {
    await service.close();
  });

  /** Gives up after 5 s: without the command timeout the request would wait for good. */
  const generate = async () => {
    const startedAt = Date.now();
    const res = await fetch(`${service.url}/v1/svc-otp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(otpBody('hung')),
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(200);
    return { otpUuid: ((await res.json()) as { otpUuid: string }).otpUuid, tookMs: Date.now() - startedAt };
  };

  test('when Redis hangs, then OTPs are still accepted within a few command timeouts and each is sent once after it answers again', async () => {
    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      service.ownRedis.freeze();
      const accepted: { otpUuid: string; tookMs: number }[] = [];
      try {
        for (let i = 0; i < 3; i += 1) accepted.push(await generate());
        // Rate limits and the enqueue each wait one timeout (300 ms), then fall back.
        for (const { tookMs } of accepted) expect(tookMs).toBeLessThan(2000);
        expect(service.ctx.dispatch.pending()).toBe(3);
        const states = await service.ctx.mongo
          .collection('deliveries')
          .find({ refId: { $in: accepted.map((a) => a.otpUuid) } })
          .toArray();
        expect(states.map((row) => row.state)).toEqual(['QUEUED', 'QUEUED', 'QUEUED']);
      } finally {
        service.ownRedis.thaw();
      }

      const sent = await eventually(async () => {
        const outbox = await readOutbox(service, '+15550007101');
        return accepted.every((a) => outbox.some((m) => m.otpUuid === a.otpUuid)) ? outbox : undefined;
      });
      await eventually(async () => (service.ctx.dispatch.pending() === 0 ? true : undefined));
      // Commands that timed out still ran once Redis woke up; a job's id is its delivery's, so the
      // API's retry of the same job adds nothing and each code goes out once.
      for (const { otpUuid } of accepted) expect(sent.filter((m) => m.otpUuid === otpUuid)).toHaveLength(1);
    } finally {
      await worker.shutdown();
    }
  }, 60000);
});
