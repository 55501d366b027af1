import { loadConfig } from '../../core/platform/config/config.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const FAIR_SHARE = 5;
const BURST = 30;
const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'fa'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'fairness-test-twilio-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});
const noisyMobile = (i: number) => `+1555100${String(i).padStart(4, '0')}`;
const quietMobile = '+15552009999';

// One dispatch slot, so the order in which the provider receives the messages is the order in
// which the worker took the jobs.
describe('dispatch slots shared between enterprises', () => {
  let service: TestService;
  let stub: ProviderStub;
  let worker: RunningWorker | undefined;
  let noisyToken: string;
  let quietToken: string;

  beforeAll(async () => {
    stub = await startProviderStub([{ status: 201, body: { sid: 'SM22222222222222222222222222222222', status: 'queued' } }]);
    service = await startTestService('fairness', { DISPATCH_FAIR_SHARE: String(FAIR_SHARE), ...twilioEnv(stub.url) });
    noisyToken = (await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'noisy' })).accessToken;
    quietToken = (await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'quiet' })).accessToken;
    for (let i = 0; i < BURST; i++)
      await insertUser(service.ctx.mongo, { userId: `noisy-${i}`, enterpriseId: 'noisy', mobileNumber: noisyMobile(i) });
    await insertUser(service.ctx.mongo, { userId: 'quiet-user', enterpriseId: 'quiet', mobileNumber: quietMobile });
  });
  afterAll(async () => {
    await worker?.shutdown();
    await service.close();
    await stub.close();
  });

  const generate = async (token: string, userId: string) => {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));
    expect(res.status).toBe(200);
  };
  const recipients = () => stub.requests.map((r) => new URLSearchParams(r.body).get('To'));

  test("when one enterprise's burst waits in the dispatch queue, then another enterprise's OTP queued after it is sent before most of the burst, and the burst keeps its order", async () => {
    // The burst is queued first, one request after the other (its order is the posting order).
    for (let i = 0; i < BURST; i++) await generate(noisyToken, `noisy-${i}`);
    await generate(quietToken, 'quiet-user');
    // Jobs with a priority wait in BullMQ's prioritized set, jobs without one in the wait list.
    const counts = await service.ctx.queues.dispatch.getJobCounts('wait', 'prioritized');
    expect(counts).toEqual({ wait: FAIR_SHARE + 1, prioritized: BURST - FAIR_SHARE });

    worker = await startDispatchWorker(
      loadConfig({ ...service.env, ...twilioEnv(stub.url), DISPATCH_CONCURRENCY: '1' }),
      memoryLogger().logger,
    );
    const sent = await eventually(async () => (stub.requests.length === BURST + 1 ? recipients() : undefined));

    // Nothing accepted is lost, and the quiet enterprise's OTP goes right after the noisy one's fair share.
    expect(new Set(sent)).toEqual(new Set([...Array.from({ length: BURST }, (_, i) => noisyMobile(i)), quietMobile]));
    expect(sent.indexOf(quietMobile)).toBe(FAIR_SHARE);
    expect(sent.filter((to) => to !== quietMobile)).toEqual(Array.from({ length: BURST }, (_, i) => noisyMobile(i)));
  });
});
