import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'ab'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'recovery-test-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});

/** Recovery bound asserted here: the design gives at most 12 s; the rest is room for a loaded machine. */
const RECOVERY_BOUND_MS = 20000;

describe('dispatch worker recovery after kill -9 (default lock settings)', () => {
  let service: TestService;
  let stub: ProviderStub;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // No WORKER_LOCK_DURATION_MS override: this measures the shipped default.
    service = await startTestService('recovery');
    await insertUser(service.ctx.mongo, { userId: 'rita', mobileNumber: '+15550006666' });
    // The first send hangs (its worker dies before the provider answers); later ones succeed.
    stub = await startProviderStub([
      { status: 201, body: { sid: 'SMhang', status: 'queued' }, delayMs: 120000 },
      { status: 201, body: { sid: 'SM55555555555555555555555555555555', status: 'queued' } },
    ]);
  });
  afterAll(async () => {
    for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await stub.close();
    await service.close();
  });

  test('when the worker running a job is killed with SIGKILL, then a surviving worker sends it within the recovery bound, once', async () => {
    const token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    const env = { ...service.env, ...twilioEnv(stub.url) };
    const doomed = spawnProcessEntry('workers/dispatch/main.js', env);
    workers.push(doomed);
    await waitForOutput(doomed, 'dispatch worker running');
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('rita'));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    await eventually(async () => (stub.requests.length === 1 ? true : undefined));
    const survivor = spawnProcessEntry('workers/dispatch/main.js', env);
    workers.push(survivor);
    await waitForOutput(survivor, 'dispatch worker running');

    const killedAt = Date.now();
    doomed.child.kill('SIGKILL');
    const row = await eventually(
      async () => {
        const r = await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid });
        return r?.state === 'SENT' ? r : undefined;
      },
      RECOVERY_BOUND_MS + 5000,
      100,
    );
    const recoveryMs = Date.now() - killedAt;
    if (process.env.SHOW_RECOVERY) console.log(`recovery ${recoveryMs} ms`);
    expect(row).toMatchObject({ state: 'SENT', providerMessageId: 'SM55555555555555555555555555555555' });
    expect(stub.requests).toHaveLength(2);
    expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    expect(survivor.output()).toContain('job stalled; it will be retried');
  }, 60000);
});
