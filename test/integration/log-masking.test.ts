import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'ab'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'log-masking-test-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});

describe('log lines never carry a full phone number or e-mail address', () => {
  let service: TestService;
  let token: string;
  let stub: ProviderStub | undefined;
  let worker: WorkerProcess | undefined;
  const mobile = '+15551230987';

  beforeAll(async () => {
    service = await startTestService('logmasking', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'dora', mobileNumber: mobile, emailId: 'dora.explorer@example.com' });
  });
  afterEach(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    worker = undefined;
    await stub?.close();
    stub = undefined;
  });
  afterAll(async () => {
    await service.close();
  });

  async function generate(): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('dora'));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  const deliveryState = (otpUuid: string, state: string) =>
    eventually(async () =>
      (await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid }))?.state === state ? true : undefined,
    );

  test('when the provider refuses the number with an error text that quotes it (Twilio 21211), then the worker log masks it', async () => {
    // Twilio's own wording: the refused number, in full, inside the error message.
    stub = await startProviderStub([
      {
        status: 400,
        body: {
          code: 21211,
          message: `The 'To' number ${mobile} is not a valid phone number. Contact dora.explorer@example.com.`,
          status: 400,
        },
      },
    ]);
    worker = spawnProcessEntry('workers/dispatch/main.js', { ...service.env, ...twilioEnv(stub.url) });
    await waitForOutput(worker, 'dispatch worker running');
    await deliveryState(await generate(), 'FAILED');
    await waitForOutput(worker, 'job failed');
    const output = worker.output();
    expect(output).toContain('not a valid phone number');
    expect(output).not.toContain(mobile.slice(1));
    expect(output).not.toContain('5551230987');
    expect(output).not.toContain('dora.explorer');
    expect(output).toContain('*87');
  });

  test('when a transient provider error quotes the number, then the retry warning masks it', async () => {
    stub = await startProviderStub([
      { status: 503, body: { code: 20503, message: `Service unavailable while sending to ${mobile}`, status: 503 } },
      { status: 201, body: { sid: 'SM44444444444444444444444444444444', status: 'queued' } },
    ]);
    worker = spawnProcessEntry('workers/dispatch/main.js', { ...service.env, ...twilioEnv(stub.url) });
    await waitForOutput(worker, 'dispatch worker running');
    await deliveryState(await generate(), 'SENT');
    await waitForOutput(worker, 'transient delivery failure');
    const output = worker.output();
    expect(output).toContain('Service unavailable while sending to');
    expect(output).not.toContain('5551230987');
  });
});
