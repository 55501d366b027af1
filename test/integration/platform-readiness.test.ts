import { startRedisServer, type LocalService } from '../../scripts/local-services.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';

describe('readiness when Redis stops', () => {
  let redis: LocalService;
  let service: TestService;
  beforeAll(async () => {
    // A Redis of this file's own, so stopping it does not disturb other test files.
    redis = await startRedisServer();
    service = await startTestService('readiness', { REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await service.close();
    await redis.stop();
  });

  test('when Redis is stopped, then /readyz is 503 naming redis and the process keeps serving', async () => {
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    await redis.stop();
    // The service has seen the connection drop.
    await eventually(async () => (service.ctx.redis.status !== 'ready' ? true : undefined));
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { mongodb: 'up', redis: 'down' }, down: ['redis'] });
    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await fetch(`${service.url}/metrics`);
    expect(metrics.status).toBe(200);
  });
});
