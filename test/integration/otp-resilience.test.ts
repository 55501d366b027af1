import { loadConfig } from '../../core/platform/config/config.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { startServiceOnOwnRedis, type ServiceOnOwnRedis } from '../support/own-redis.js';
import { memoryLogger } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const stamp = expect.stringMatching(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);

describe('OTP abuse limits and Redis outages', () => {
  let service: ServiceOnOwnRedis;
  let token: string;

  beforeAll(async () => {
    service = await startServiceOnOwnRedis('otpresilience', {
      RATE_LIMIT_OTP_PER_USER: '2',
      RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600',
      RATE_LIMIT_VALIDATE_PER_CLIENT: '3',
      SWEEPER_INTERVAL_MS: '200',
      SWEEPER_GRACE_MS: '500',
    });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'dave', mobileNumber: '+15550006666' });
    await insertUser(service.ctx.mongo, { userId: 'erin', mobileNumber: '+15550005555' });
  });
  afterAll(async () => {
    await service.close();
  });

  const generate = (userId: string) => postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));

  test('when a user asks for more OTPs than the limit, then 429 with Retry-After in the error body shape', async () => {
    expect((await generate('dave')).status).toBe(200);
    expect((await generate('dave')).status).toBe(200);
    const refused = await generate('dave');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(await refused.json()).toEqual({
      timestamp: stamp,
      status: 429,
      error: 'Too Many Requests',
      message: `Too many requests: retry after ${retryAfter} seconds`,
      path: '/v1/svc-otp',
    });
    // Another user of the same client is not affected.
    expect((await generate('erin')).status).toBe(200);
  });

  test('when a client validates too often, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push(
        (await postJson(`${service.url}/v1/svc-otp/00000000-0000-4000-8000-000000000000/validate`, token, { otp: '123456' })).status,
      );
    }
    expect(statuses).toEqual([404, 404, 404, 429]);
  });

  test('when Redis is down while an OTP is accepted, then the request still succeeds and the sweeper delivers it once Redis is back', async () => {
    await service.ownRedis.stop();
    const res = await generate('erin');
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    expect(await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid })).toMatchObject({ state: 'QUEUED' });

    await service.ownRedis.restart();
    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      const message = await outboxMessageFor(service, '+15550005555', otpUuid);
      expect(message.text).toMatch(/^Your verification code is [0-9]{6}\./);
      await eventually(async () =>
        (await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid }))?.state === 'SENT' ? true : undefined,
      );
    } finally {
      await worker.shutdown();
    }
  });
});
