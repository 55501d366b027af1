import { loadConfig } from '../../core/platform/config/config.js';
import { dispatchPriority } from '../../core/platform/queues/dispatch-fairness.js';
import { enrollmentJobId } from '../../core/platform/queues/enrollment.queue.js';
import { activationDeliveryId } from '../../core/users/activation-deliveries.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from '../../workers/enrollment/enrollment-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { queueSettled } from '../support/queue-state.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const FAIR_SHARE = 3;
const BULK = 12;
const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'ac'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'activation-fairness-test-twilio-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});
const bulkMobile = (i: number) => `+1555300${String(i).padStart(4, '0')}`;
const quietMobile = '+15554009999';

// One enrollment slot and one dispatch slot, so the order in which the provider receives the
// messages is the order in which the workers took the jobs of both queues.
describe('activation codes in queues shared between enterprises', () => {
  let service: TestService;
  let stub: ProviderStub;
  const workers: RunningWorker[] = [];
  let bulkToken: string;
  let quietToken: string;

  beforeAll(async () => {
    stub = await startProviderStub([{ status: 201, body: { sid: 'SM33333333333333333333333333333333', status: 'queued' } }]);
    service = await startTestService('fairness-activation', { DISPATCH_FAIR_SHARE: String(FAIR_SHARE), ...twilioEnv(stub.url) });
    await createGroups(service, ['retail']);
    bulkToken = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'bulk' })).accessToken;
    quietToken = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'quiet' })).accessToken;
  });
  afterAll(async () => {
    for (const worker of workers) await worker.shutdown();
    await service.close();
    await stub.close();
  });

  // SMS only: one message per user.
  const enroll = async (token: string, userId: string, mobileNumber: string) => {
    const res = await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { emailId: undefined, mobileNumber }));
    expect(res.status).toBe(201);
  };
  const recipients = () => stub.requests.map((r) => new URLSearchParams(r.body).get('To'));
  const workerConfig = () => loadConfig({ ...service.env, ...twilioEnv(stub.url), ENROLLMENT_CONCURRENCY: '1', DISPATCH_CONCURRENCY: '1' });
  const startWorkers = async () => {
    if (workers.length > 0) return;
    workers.push(await startEnrollmentWorker(workerConfig(), memoryLogger().logger));
    workers.push(await startDispatchWorker(workerConfig(), memoryLogger().logger));
  };

  test("when one enterprise's bulk enrollment waits in the queues, then another enterprise's activation code enrolled after it is sent right after the fair share, and the bulk keeps its order", async () => {
    for (let i = 0; i < BULK; i++) await enroll(bulkToken, `bulk-${i}`, bulkMobile(i));
    await enroll(quietToken, 'quiet-user', quietMobile);
    // Enrollment jobs with a priority wait in BullMQ's prioritized set, and are counted there.
    expect(await service.ctx.queues.enrollment.getJobCounts('wait', 'prioritized')).toEqual({
      wait: FAIR_SHARE + 1,
      prioritized: BULK - FAIR_SHARE,
    });
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toContain(`queue_jobs{queue="enrollment",state="prioritized"} ${BULK - FAIR_SHARE}`);
    expect(metrics).toMatch(/queue_oldest_waiting_age_seconds\{queue="enrollment"\} \d/);

    await startWorkers();
    const sent = await eventually(async () => (stub.requests.length === BULK + 1 ? recipients() : undefined));

    expect(new Set(sent)).toEqual(new Set([...Array.from({ length: BULK }, (_, i) => bulkMobile(i)), quietMobile]));
    expect(sent.indexOf(quietMobile)).toBe(FAIR_SHARE);
    expect(sent.filter((to) => to !== quietMobile)).toEqual(Array.from({ length: BULK }, (_, i) => bulkMobile(i)));
    // Each dispatch job got its enrollment's priority: none within the fair share (as a job queued
    // by an earlier version, without one), then one lower per further fair share.
    for (let i = 0; i < BULK; i++) {
      const job = await service.ctx.queues.dispatch.getJob(activationDeliveryId({ enterpriseId: 'bulk', userId: `bulk-${i}` }, 1, 'SMS'));
      expect(job?.priority).toBe(dispatchPriority(i + 1, FAIR_SHARE) ?? 0);
    }
  });

  test('when an admin re-issues the activation code of a user of an enterprise beyond its fair share, then the new code is queued without a priority', async () => {
    const userId = `bulk-${BULK - 1}`;
    await startWorkers();
    await queueSettled(service.ctx.queues.dispatch);
    const before = stub.requests.length;
    const res = await fetch(`${service.url}/admin/users/${userId}/activation?enterpriseId=bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(res.status).toBe(202);
    await eventually(async () => (stub.requests.length === before + 1 ? true : undefined));
    await queueSettled(service.ctx.queues.dispatch);
    expect(recipients().at(-1)).toBe(bulkMobile(BULK - 1));
    expect((await service.ctx.queues.enrollment.getJob(enrollmentJobId('bulk', userId, 2)))?.priority).toBe(0);
    expect((await service.ctx.queues.dispatch.getJob(activationDeliveryId({ enterpriseId: 'bulk', userId }, 2, 'SMS')))?.priority).toBe(0);
  });
});
