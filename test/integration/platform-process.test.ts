import { ObjectId } from 'mongodb';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { eventually } from '../support/otp-helpers.js';
import { testEnv } from '../support/test-service.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';
import { findFreePort, startRedisServer } from '../../scripts/local-services.js';

/** How the process exited, or 'still running' when it had not within `ms`. */
async function exitWithin(
  proc: WorkerProcess,
  ms: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'> {
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void proc.exited.then((how) => (exit = how));
  return eventually(async () => exit, ms).catch(() => 'still running' as const);
}

/** Waits until an HTTP address answers 200. */
const answers = (url: string) =>
  eventually(
    () =>
      fetch(url).then(
        (res) => (res.status === 200 ? true : undefined),
        () => undefined,
      ),
    15_000,
  );

/**
 * Sends SIGTERM to a process that waits for Redis at its start, once `url` (the address it serves meanwhile) answers, and
 * checks that it gives the start up and exits 0 within `withinMs`, its address closed, never having said `running`.
 */
async function expectStartGivenUpOnSigterm(
  proc: WorkerProcess,
  { url, withinMs, running }: { url: string; withinMs: number; running: string },
) {
  try {
    await answers(url);
    proc.child.kill('SIGTERM');
    expect(await exitWithin(proc, withinMs)).toEqual({ code: 0, signal: null });
    expect(proc.output()).toContain('start given up: the process was told to stop while it waited for Redis');
    expect(proc.output()).not.toContain(running);
    await expect(fetch(url)).rejects.toThrow();
  } finally {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

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

  test('when a process starts outside production without the OTP keys, then it stops at once naming both, before it touches the stores', async () => {
    for (const entry of ['api/main.js', 'workers/dispatch/main.js', 'workers/enrollment/main.js', 'workers/notifications/main.js']) {
      const env = testEnv('nokeys');
      delete env.OTP_HMAC_KEY;
      delete env.OTP_ENCRYPTION_KEY;
      const proc = spawnProcessEntry(entry, env);
      expect({ entry, exit: await exitWithin(proc, 20_000) }).toEqual({ entry, exit: { code: 1, signal: null } });
      const output = proc.output();
      expect(output).toContain('Invalid configuration:');
      for (const key of ['OTP_ENCRYPTION_KEY', 'OTP_HMAC_KEY']) expect(output).toContain(`- ${key}:`);
      expect(output).not.toContain('MongoDB migrated');
      expect(output).not.toContain('default templates seeded');
    }
  });

  test('when a setting is mistyped in the environment, then the process starts and warns naming the variable and the setting it nearly spells, never the value', async () => {
    const worker = spawnProcessEntry('workers/enrollment/main.js', { ...testEnv('typo'), RATE_LIMT_OTP_PER_CLIENT: 'zz-typed-value' });
    try {
      await waitForOutput(worker, 'worker running');
      expect(worker.output()).toContain(
        'RATE_LIMT_OTP_PER_CLIENT is not a setting of this service and is ignored: did you mean RATE_LIMIT_OTP_PER_CLIENT?',
      );
      expect(worker.output()).not.toContain('zz-typed-value');
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
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

  test('when the API process starts with an OTP_ENCRYPTION_KEY that does not open the signing keys stored in MongoDB, then it refuses to start, naming the setting', async () => {
    const env = testEnv('sealedkeys');
    const port = await findFreePort();
    const first = spawnProcessEntry('api/main.js', { ...env, PORT: String(port) });
    try {
      await waitForOutput(first, 'API listening');
      // The first start made and sealed the signing keys.
      await answers(`http://127.0.0.1:${port}/svc/authserver/jwks`);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    // Another key (a changed secret, a replica given the wrong one): it would answer ready and 500 every token request.
    const other = spawnProcessEntry('api/main.js', { ...env, PORT: String(port), OTP_ENCRYPTION_KEY: 'ab'.repeat(32) });
    try {
      expect(await exitWithin(other, 20_000)).toEqual({ code: 1, signal: null });
      expect(other.output()).toContain('OTP_ENCRYPTION_KEY');
      expect(other.output()).not.toContain('API listening');
    } finally {
      other.child.kill('SIGKILL');
      await other.exited;
    }
  });

  test('when the API process starts on a database whose users already share a key of a unique index it must create, then it refuses to start naming the index and both users, never their e-mail address or number', async () => {
    const env = testEnv('dupusers');
    const mongo = await connectMongo(env.MONGODB_URI as string);
    // Ids led by letters: a log line is masked as a whole, where a leading run of ten digits would read as a phone number.
    const ids = [new ObjectId('a0a0a0a0a0a0a0a0a0a0a0a1'), new ObjectId('a0a0a0a0a0a0a0a0a0a0a0a2')];
    try {
      // A database restored without its indexes: two users of one id in one enterprise.
      await mongo.collection('users').insertMany(
        ids.map((_id, i) => ({
          _id,
          enterpriseId: 'acme',
          userId: 'ann@example.com',
          emailId: 'ann@example.com',
          mobileNumber: `+1555020999${i}`,
          status: 'ACTIVE',
        })),
      );
    } finally {
      await mongo.close();
    }
    const api = spawnProcessEntry('api/main.js', { ...env, PORT: String(await findFreePort()) });
    try {
      expect(await exitWithin(api, 20_000)).toEqual({ code: 1, signal: null });
      const output = api.output();
      expect(output).toContain('the unique index enterpriseId_1_userId_1 of users on (enterpriseId, userId) cannot be built');
      expect(output).toContain(`_id ${ids[0]?.toHexString() ?? ''} (enterpriseId \\"acme\\", userId \\"a***@example.com\\")`);
      expect(output).toContain(`_id ${ids[1]?.toHexString() ?? ''}`);
      expect(output).not.toContain('ann@example.com');
      expect(output).not.toContain('555020999');
      expect(output).not.toContain('API listening');
    } finally {
      api.child.kill('SIGKILL');
      await api.exited;
    }
  });

  test('when a worker starts with an OTP_ENCRYPTION_KEY that does not open the secrets stored in MongoDB, then it refuses to start, naming the setting; with that key as previous it starts', async () => {
    const env = testEnv('workerkeys');
    const port = await findFreePort();
    const api = spawnProcessEntry('api/main.js', { ...env, PORT: String(port) });
    try {
      await waitForOutput(api, 'API listening');
      // The first start made and sealed the signing keys.
      await answers(`http://127.0.0.1:${port}/svc/authserver/jwks`);
    } finally {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    const otherKey = 'cd'.repeat(32);
    // Every worker opens sealed values (delivery codes, activation codes, callback secrets, the VAPID key).
    for (const role of ['dispatch', 'enrollment', 'notifications']) {
      const other = spawnProcessEntry(`workers/${role}/main.js`, { ...env, OTP_ENCRYPTION_KEY: otherKey });
      try {
        expect({ role, exit: await exitWithin(other, 20_000) }).toEqual({ role, exit: { code: 1, signal: null } });
        expect(other.output()).toContain('OTP_ENCRYPTION_KEY');
        expect(other.output()).not.toMatch(/worker running/);
      } finally {
        other.child.kill('SIGKILL');
        await other.exited;
      }
    }
    // Mid-rotation: the new key seals, the one the secrets were sealed with still opens them.
    const rotating = spawnProcessEntry('workers/dispatch/main.js', {
      ...env,
      OTP_ENCRYPTION_KEY: otherKey,
      OTP_ENCRYPTION_KEYS_PREVIOUS: env.OTP_ENCRYPTION_KEY,
    });
    try {
      await waitForOutput(rotating, 'dispatch worker running');
    } finally {
      rotating.child.kill('SIGTERM');
      await rotating.exited;
    }
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

  test('when a worker process gets SIGTERM while it still waits for Redis at start, then it gives the start up and exits 0 at once', async () => {
    const [deadRedisPort, metricsPort] = [await findFreePort(), await findFreePort()];
    const env = {
      ...testEnv('workerstopswaiting', { REDIS_URL: `redis://127.0.0.1:${deadRedisPort}` }),
      METRICS_PORT: String(metricsPort),
    };
    await expectStartGivenUpOnSigterm(spawnProcessEntry('workers/dispatch/main.js', env), {
      url: `http://127.0.0.1:${metricsPort}/metrics`,
      withinMs: 10_000,
      running: 'dispatch worker running',
    });
  });

  test('when npm start gets SIGTERM while its workers still wait for Redis, then it stops the API it started and exits 0 at once', async () => {
    const [deadRedisPort, port] = [await findFreePort(), await findFreePort()];
    const env = testEnv('startstopswaiting', {
      REDIS_URL: `redis://127.0.0.1:${deadRedisPort}`,
      PORT: String(port),
      SHUTDOWN_DRAIN_WINDOW_MS: '0',
    });
    // The API starts on a Redis that is down (it answers 503 where it needs Redis); the workers wait for it.
    await expectStartGivenUpOnSigterm(spawnProcessEntry('scripts/start-local.js', env), {
      url: `http://127.0.0.1:${port}/healthz`,
      withinMs: 15_000,
      running: 'svc-identity is running',
    });
  });

  test('when npm start cannot start its workers, then it stops the API it had started and exits 1 saying why', async () => {
    // Workers refuse a Redis that may evict keys; the API only warns and serves.
    const evicting = await startRedisServer({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    const port = await findFreePort();
    try {
      const env = testEnv('startnoworkers', { REDIS_URL: evicting.url, PORT: String(port), SHUTDOWN_DRAIN_WINDOW_MS: '0' });
      const proc = spawnProcessEntry('scripts/start-local.js', env);
      expect(await exitWithin(proc, 20_000)).toEqual({ code: 1, signal: null });
      const output = proc.output();
      expect(output).toContain('svc-identity failed to start: its workers did not start, so the API it had started was stopped:');
      expect(output).toContain('Redis maxmemory-policy must be noeviction');
      // The API's own shutdown ran to its end (its stores closed), not a bare exit.
      expect(output).toMatch(/"step":"connections","msg":"shutdown step done"/);
      expect(output).not.toContain('svc-identity is running');
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      await evicting.stop();
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
