import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { loadConfig } from '../../core/platform/config/config.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput } from '../support/worker-process.js';

const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'ef'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'lifecycle-test-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});
const accepted = (sid: string, delayMs?: number) => ({ status: 201, body: { sid, status: 'queued' }, delayMs });

describe('worker processes: graceful shutdown and crashes', () => {
  let service: TestService;
  let token: string;
  let stub: ProviderStub | undefined;

  beforeAll(async () => {
    service = await startTestService('lifecycle', { RATE_LIMIT_OTP_PER_USER: '1000', WORKER_LOCK_DURATION_MS: '1000', LOG_LEVEL: 'info' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'carol', mobileNumber: '+15550007777' });
  });
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });
  afterAll(async () => {
    await service.close();
  });

  async function generate(): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('carol'));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  async function deliveryRow(otpUuid: string) {
    return service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid });
  }

  test('when SIGTERM arrives with a job in flight, then the job finishes, the process exits 0, and a second signal is harmless', async () => {
    stub = await startProviderStub([accepted('SM33333333333333333333333333333333', 1500)]);
    const worker = spawnProcessEntry('workers/dispatch/main.js', { ...service.env, ...twilioEnv(stub.url) });
    await waitForOutput(worker, 'dispatch worker running');
    const otpUuid = await generate();
    await eventually(async () => (stub && stub.requests.length === 1 ? true : undefined));
    worker.child.kill('SIGTERM');
    // The second signal comes once the first one's shutdown has begun (the job is still in flight).
    await waitForOutput(worker, 'shutting down');
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await deliveryRow(otpUuid)).toMatchObject({ state: 'SENT', providerMessageId: 'SM33333333333333333333333333333333' });
    expect(worker.output()).toContain('shutdown already in progress');
  });

  test('when a worker is killed mid-job, then another worker retries it and the message is accepted once', async () => {
    // The first send hangs (the process dies before the provider answers); later ones succeed.
    stub = await startProviderStub([accepted('SMdead', 60000), accepted('SM44444444444444444444444444444444')]);
    const doomed = spawnProcessEntry('workers/dispatch/main.js', { ...service.env, ...twilioEnv(stub.url) });
    await waitForOutput(doomed, 'dispatch worker running');
    const otpUuid = await generate();
    await eventually(async () => (stub && stub.requests.length === 1 ? true : undefined));
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    expect(await deliveryRow(otpUuid)).toMatchObject({ state: 'QUEUED' });

    const survivor = await startDispatchWorker(loadConfig({ ...service.env, ...twilioEnv(stub.url) }), memoryLogger().logger);
    try {
      const row = await eventually(async () => {
        const r = await deliveryRow(otpUuid);
        return r?.state === 'SENT' ? r : undefined;
      }, 20000);
      expect(row).toMatchObject({ state: 'SENT', providerMessageId: 'SM44444444444444444444444444444444', attempts: 2 });
      expect(stub.requests).toHaveLength(2);
    } finally {
      await survivor.shutdown();
    }
  });
});
