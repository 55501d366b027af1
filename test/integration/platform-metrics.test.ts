import { dataNodes } from '../../core/platform/queues/redis-connection.js';
import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { freePort, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { metricSample as sample } from '../support/metrics-text.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/**
 * A worker process of the enclosing describe block's own, its metrics served on a port of their own; `start` returns once
 * they are, with the address of a path on that port. The process gets SIGTERM after the block's tests.
 */
function metricsWorkerOfBlock() {
  let worker: WorkerProcess | undefined;
  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    await worker?.exited;
  });
  return async (entry: string, env: Record<string, string>) => {
    const metricsPort = await freePort();
    const started = spawnProcessEntry(entry, { ...env, METRICS_PORT: String(metricsPort) });
    worker = started;
    await waitForOutput(started, 'metrics served on /metrics');
    return { worker: started, at: (path: string) => `http://127.0.0.1:${metricsPort}${path}` };
  };
}

/** A scrape of `url` without the token, with a wrong one and with the token as a Basic password is refused with no metric. */
async function expectScrapesWithoutTheTokenRefused(url: string, metricsToken: string, metric: string) {
  for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${Buffer.from(`x:${metricsToken}`).toString('base64')}`]) {
    const refused = await fetch(url, { headers: authorization ? { authorization } : {} });
    expect({ authorization, status: refused.status }).toEqual({ authorization, status: 401 });
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await refused.text()).not.toContain(metric);
  }
}

describe('Prometheus metrics', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('metrics');
  });
  afterAll(async () => {
    await service.close();
  });
  const scrape = async () => (await fetch(`${service.url}/metrics`)).text();

  test('when requests were served, then /metrics has the request histogram by route and status and queue counts', async () => {
    // Bodies are read so each response has finished (and been observed) before the scrape.
    await (await fetch(`${service.url}/readyz`)).text();
    await (await fetch(`${service.url}/does-not-exist`)).text();
    await service.ctx.queues.dispatch.add('probe', { n: 1 }, { delay: 60000 });
    // A job with a priority (dispatch fairness) waits in BullMQ's prioritized set, not in 'waiting'.
    await service.ctx.queues.dispatch.add('probe', { n: 2 }, { priority: 3 });
    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).toMatch(/queue_jobs\{queue="dispatch",state="delayed"\} 1/);
    expect(text).toMatch(/queue_jobs\{queue="dispatch",state="prioritized"\} 1/);
    expect(text).toMatch(/queue_oldest_waiting_age_seconds\{queue="dispatch"\} \d/);
    for (const state of ['waiting', 'active', 'failed', 'completed'])
      expect(text).toContain(`queue_jobs{queue="dispatch",state="${state}"} 0`);
    expect(text).toContain('queue_jobs{queue="enrollment",state="waiting"} 0');
    expect(text).toContain('svc_dependency_up{dependency="mongodb"} 1');
    expect(text).toContain('svc_dependency_up{dependency="redis"} 1');
  });

  test('when the authorization server answers, then each of its endpoints has its own route label', async () => {
    const { clientId, clientSecret } = await createClientWithToken(service, { scopes: ['otp'] });
    await (await requestToken(service, { clientId, clientSecret })).text();
    await (await fetch(`${service.url}/svc/authserver/jwks`)).text();
    const text = await scrape();
    expect(text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/svc\/authserver\/oauth\/token",status="200"\} [1-9]/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/svc\/authserver\/jwks",status="200"\} 1/);
    expect(text).not.toContain('route="/svc/authserver"');
  });

  test('when a job waits untaken, then the age of the oldest waiting job grows', async () => {
    await service.ctx.queues.enrollment.add('probe', { n: 1 });
    const age = await eventually(async () => {
      const value = sample(await scrape(), 'queue_oldest_waiting_age_seconds{queue="enrollment"}');
      return value > 0.2 ? value : undefined;
    });
    expect(age).toBeLessThan(60);
    expect(sample(await scrape(), 'queue_oldest_waiting_age_seconds{queue="notification"}')).toBe(0);
  });

  test('when jobs wait with priorities in several bands, then the age is that of the oldest, though it sits in neither end of the prioritized set', async () => {
    // BullMQ orders the prioritized set by priority, then arrival: the oldest job here is the first
    // of a middle band, and the set's head (priority 1) and tail (the newest of priority 9) are younger.
    const now = Date.now();
    const queue = service.ctx.queues['notification-push'];
    await queue.add('probe', { n: 'oldest' }, { priority: 3, timestamp: now - 100_000 });
    await queue.add('probe', { n: 'lowest' }, { priority: 9, timestamp: now - 20_000 });
    await queue.add('probe', { n: 'highest' }, { priority: 1, timestamp: now - 10_000 });
    await queue.add('probe', { n: 'newest' }, { priority: 9, timestamp: now - 5_000 });
    const age = sample(await scrape(), 'queue_oldest_waiting_age_seconds{queue="notification-push"}');
    expect(age).toBeGreaterThanOrEqual(100);
    expect(age).toBeLessThan(160);
  });

  test("when /metrics is scraped again, then the prioritized set's script goes to Redis by its SHA, not as its text", async () => {
    const queue = service.ctx.queues['notification-push'];
    // The script's own call: the prioritized set's key, then the prefix of the queue's job keys.
    const isScriptCall = (args: string[]) => args.some((arg, i) => arg === queue.keys.prioritized && args[i + 1] === queue.toKey(''));
    await scrape(); // the first scrape may have to send the text: the server did not know the script
    const seen: string[] = [];
    const monitors = await Promise.all(dataNodes(service.ctx.redis).map((node) => node.monitor()));
    try {
      for (const monitor of monitors) {
        monitor.on('monitor', (_time: string, args: string[]) => {
          if (isScriptCall(args)) seen.push(String(args[0]).toLowerCase());
        });
      }
      await scrape();
      await scrape();
      await eventually(async () => (seen.length >= 2 ? true : undefined));
    } finally {
      for (const monitor of monitors) monitor.disconnect();
    }
    expect(seen).toEqual(['evalsha', 'evalsha']);
  });

  describe('business counters and a worker process of its own', () => {
    const startWorker = metricsWorkerOfBlock();

    test('when an OTP is generated, sent by a dispatch process and validated, then the API and the worker count it on their own /metrics', async () => {
      const { worker, at } = await startWorker('workers/dispatch/main.js', service.env);
      await waitForOutput(worker, 'dispatch worker running');
      const workerScrape = async () => (await fetch(at('/metrics'))).text();
      const sentBefore = sample(await workerScrape(), 'svc_deliveries_total{channel="SMS",provider="outbox",state="SENT"}');

      const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
      await insertUser(service.ctx.mongo, { userId: 'metered', mobileNumber: '+15550004242' });
      const before = await scrape();
      const res = await postJson(`${service.url}/v1/svc-otp`, accessToken, otpBody('metered'));
      expect(res.status).toBe(200);
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      const message = await outboxMessageFor(service, '+15550004242', otpUuid);
      const code = /\b(\d{6})\b/.exec(message.text)?.[1] ?? '';
      const wrong = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, accessToken, {
        otp: code === '000000' ? '111111' : '000000',
      });
      expect(wrong.status).toBe(422);
      const right = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, accessToken, { otp: code });
      expect(right.status).toBe(200);

      const after = await scrape();
      const delta = (series: string) => sample(after, series) - sample(before, series);
      expect(delta('svc_otp_requests_total{outcome="accepted"}')).toBe(1);
      expect(delta('svc_otp_validations_total{outcome="FAILED"}')).toBe(1);
      expect(delta('svc_otp_validations_total{outcome="SUCCESS"}')).toBe(1);

      const workerText = await eventually(async () => {
        const text = await workerScrape();
        return sample(text, 'svc_deliveries_total{channel="SMS",provider="outbox",state="SENT"}') > sentBefore ? text : undefined;
      });
      expect(sample(workerText, 'svc_provider_send_duration_seconds_count{channel="SMS",provider="outbox",outcome="ok"}')).toBeGreaterThan(
        0,
      );
      // A worker's own process metrics, and nothing but /metrics and its liveness probe.
      expect(workerText).toContain('process_resident_memory_bytes');
      expect((await fetch(at('/other'))).status).toBe(404);
      // Its liveness probe: no token is set here, and none would be asked there.
      expect((await fetch(at('/healthz'))).status).toBe(200);
    });
  });

  describe("the dispatch worker's delivery sweeper", () => {
    const startWorker = metricsWorkerOfBlock();

    test('when the sweeper queues a delivery whose job was lost, then the dispatch process counts it as requeued and the message goes out', async () => {
      const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
      await insertUser(service.ctx.mongo, { userId: 'swept', mobileNumber: '+15550004343' });
      const res = await postJson(`${service.url}/v1/svc-otp`, accessToken, otpBody('swept'));
      expect(res.status).toBe(200);
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      // The job is lost (as in a Redis that lost its last writes): only the QUEUED row is left.
      await (await service.ctx.queues.dispatch.getJob(`otp-${otpUuid}-SMS`))?.remove();

      const { worker, at } = await startWorker('workers/dispatch/main.js', {
        ...service.env,
        SWEEPER_INTERVAL_MS: '200',
        SWEEPER_GRACE_MS: '300',
      });
      await waitForOutput(worker, 'dispatch worker running');
      await outboxMessageFor(service, '+15550004343', otpUuid);
      const text = await eventually(async () => {
        const scraped = await (await fetch(at('/metrics'))).text();
        return sample(scraped, 'svc_deliveries_swept_total{outcome="requeued"}') >= 1 ? scraped : undefined;
      });
      expect(text).toContain('# TYPE svc_deliveries_swept_total counter');
    });
  });
});

describe('Prometheus metrics behind METRICS_TOKEN', () => {
  const metricsToken = 'scraper-token-of-24-characters-or-more';
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('metricstoken', { METRICS_TOKEN: metricsToken });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when METRICS_TOKEN is set, then the API answers /metrics only to a scraper presenting it as a bearer token', async () => {
    await expectScrapesWithoutTheTokenRefused(`${service.url}/metrics`, metricsToken, 'http_request_duration_seconds');
    const scraped = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('process_resident_memory_bytes');
  });

  describe('a worker process', () => {
    const startWorker = metricsWorkerOfBlock();

    test("when METRICS_TOKEN is set, then a worker's /metrics answers only the scraper presenting it, and its /healthz answers anyone with no metric", async () => {
      const { at } = await startWorker('workers/enrollment/main.js', service.env);
      await expectScrapesWithoutTheTokenRefused(at('/metrics'), metricsToken, 'process_resident_memory_bytes');
      const scraped = await fetch(at('/metrics'), { headers: { authorization: `Bearer ${metricsToken}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('process_resident_memory_bytes');
      // The liveness probe needs no token and learns nothing but that the event loop answers.
      const health = await fetch(at('/healthz'));
      expect(health.status).toBe(200);
      expect(await health.text()).toBe('ok\n');
    });
  });
});
