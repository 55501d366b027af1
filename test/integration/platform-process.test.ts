import { eventually } from '../support/otp-helpers.js';
import { testEnv } from '../support/test-service.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';
import { findFreePort } from '../../scripts/local-services.js';

describe('process entries', () => {
  test('when the configuration is bad, then the process stops at once with one message naming every bad key', async () => {
    for (const entry of ['api/main.js', 'workers/dispatch/main.js', 'workers/enrollment/main.js']) {
      const proc = spawnProcessEntry(entry, { REDIS_URL: 'http://wrong', PORT: 'x', DISPATCH_CONCURRENCY: '0' });
      const exit = await proc.exited;
      expect(exit).toEqual({ code: 1, signal: null });
      const output = proc.output();
      expect(output).toContain('Invalid configuration:');
      for (const key of ['DISPATCH_CONCURRENCY', 'MONGODB_URI', 'PORT', 'REDIS_URL']) expect(output).toContain(`- ${key}:`);
    }
  });

  test('when the API process gets SIGTERM, then it stops listening and exits 0', async () => {
    const port = await findFreePort();
    const api = spawnProcessEntry('api/main.js', { ...testEnv('apiproc'), PORT: String(port) });
    await waitForOutput(api, 'API listening');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    api.child.kill('SIGTERM');
    expect(await api.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  test('when a worker starts while Redis is down, then its /metrics (the liveness probe) answers while it waits for Redis', async () => {
    // A port nothing listens on: the worker's Redis connection keeps retrying.
    const [deadRedisPort, metricsPort] = [await findFreePort(), await findFreePort()];
    const env = { ...testEnv('workerwaits', { REDIS_URL: `redis://127.0.0.1:${deadRedisPort}` }), METRICS_PORT: String(metricsPort) };
    const worker = spawnProcessEntry('workers/dispatch/main.js', env);
    try {
      const scrape = await eventually(
        () =>
          fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
            (res) => (res.status === 200 ? res.text() : undefined),
            () => undefined,
          ),
        10_000,
      );
      expect(scrape).toContain('process_resident_memory_bytes');
      expect(worker.output()).not.toContain('dispatch worker running');
      expect(worker.child.exitCode).toBeNull();
    } finally {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  });

  test('when npm start runs with an ADMIN_TOKEN of the operator, then its banner does not print the token', async () => {
    const env = { ...testEnv('startbanner'), ADMIN_TOKEN: 'operator-admin-token-0123456789abcdef' };
    const proc = spawnProcessEntry('scripts/start-local.js', env);
    try {
      await waitForOutput(proc, 'svc-identity is running');
      expect(proc.output()).toContain('Admin token: (from ADMIN_TOKEN)');
      expect(proc.output()).not.toContain(env.ADMIN_TOKEN);
    } finally {
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toEqual({ code: 0, signal: null });
    }
  });

  test('when each worker process of the Procfile starts and gets SIGTERM, then it runs and exits 0', async () => {
    const env = testEnv('workerprocs');
    for (const [entry, ready] of [
      ['workers/dispatch/main.js', 'dispatch worker running'],
      ['workers/enrollment/main.js', 'enrollment worker running'],
      ['workers/notifications/main.js', 'notification-callback worker running'],
    ] as const) {
      const worker = spawnProcessEntry(entry, env);
      await waitForOutput(worker, ready);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
    }
  });
});
