import { startServiceOnOwnRedis, type ServiceOnOwnRedis } from '../support/own-redis.js';

describe('readiness when Redis stops', () => {
  let service: ServiceOnOwnRedis;
  beforeAll(async () => {
    service = await startServiceOnOwnRedis('readiness');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when Redis is stopped, then /readyz is 503 naming redis and the process keeps serving', async () => {
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    // Returns once the service has seen the connection drop.
    await service.ownRedis.stop();
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { mongodb: 'up', redis: 'down' }, down: ['redis'] });
    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await fetch(`${service.url}/metrics`);
    expect(metrics.status).toBe(200);
  });
});
