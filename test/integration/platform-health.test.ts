import { startTestService, type TestService } from '../support/test-service.js';

describe('health, readiness and unknown routes', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('health');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when the process runs, then /healthz answers 200', async () => {
    const res = await fetch(`${service.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  test('when MongoDB and Redis answer, then /readyz is 200 and names both up', async () => {
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { mongodb: 'up', redis: 'up' }, down: [] });
  });

  test('when a route does not exist, then 404 in the error body shape', async () => {
    const res = await fetch(`${service.url}/nope?x=1`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      timestamp: expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/),
      status: 404,
      error: 'Not Found',
      message: 'No route for GET /nope',
      path: '/nope',
    });
  });
});
