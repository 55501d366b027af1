import { startTestService, type TestService } from '../support/test-service.js';

describe('Prometheus metrics', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('metrics');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when requests were served, then /metrics has the request histogram by route and status and queue counts', async () => {
    // Bodies are read so each response has finished (and been observed) before the scrape.
    await (await fetch(`${service.url}/readyz`)).text();
    await (await fetch(`${service.url}/does-not-exist`)).text();
    await service.ctx.queues.dispatch.add('probe', { n: 1 }, { delay: 60000 });
    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).toMatch(/queue_jobs\{queue="dispatch",state="delayed"\} 1/);
    for (const state of ['waiting', 'active', 'failed', 'completed'])
      expect(text).toContain(`queue_jobs{queue="dispatch",state="${state}"} 0`);
    expect(text).toContain('queue_jobs{queue="enrollment",state="waiting"} 0');
  });
});
