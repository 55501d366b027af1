import type { Job } from 'bullmq';
import { loadConfig } from '../../core/platform/config/config.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { createSentOutcomes } from '../../core/deliveries/sent-outcomes.js';
import { createDispatchProcessor } from '../../workers/dispatch/dispatch.processor.js';
import { openDelivery, sealDelivery } from '../../core/deliveries/delivery-envelope.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createOtpsRepository } from '../../core/otp/otps.repository.js';
import type { DispatchJobData } from '../../core/platform/queues/dispatch.queue.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { jobEnded } from '../support/queue-state.js';
import { postTwilioStatus } from '../support/twilio-receipts.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const TWILIO_TOKEN = 'delivery-test-twilio-token';
const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'cd'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});
const accepted = { status: 201, body: { sid: 'SM11111111111111111111111111111111', status: 'queued' } };

interface DeliveryState {
  channel: string;
  state: string;
  providerMessageId?: string;
  lastError?: string;
}

describe('OTP delivery through providers, retries and receipts', () => {
  let service: TestService;
  let token: string;
  let worker: RunningWorker | undefined;
  let stub: ProviderStub | undefined;
  const mobile = '+15550009999';

  beforeAll(async () => {
    service = await startTestService('otpdelivery', { RATE_LIMIT_OTP_PER_USER: '1000', ...twilioEnv('http://127.0.0.1:1') });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'bob', mobileNumber: mobile, emailId: 'bob@example.com' });
  });
  afterEach(async () => {
    await worker?.shutdown();
    worker = undefined;
    await stub?.close();
    stub = undefined;
  });
  afterAll(async () => {
    await service.close();
  });

  /** A dispatch worker on this file's stores whose providers point where the test says. */
  function startWorker(env: Record<string, string>): Promise<RunningWorker> {
    return startDispatchWorker(loadConfig({ ...service.env, ...env }), memoryLogger().logger);
  }

  const sentJournal = () => createSentJournal(service.ctx.redis, service.config.queuePrefix);

  /** The dispatch processor on this file's stores, with providers that only count what they are given. */
  function countingProcessor() {
    const sends: unknown[] = [];
    const count = async (message: unknown) => {
      sends.push(message);
      return { providerMessageId: 'SMagain' };
    };
    const rows = createDeliveriesRepository(service.ctx.mongo);
    const processor = createDispatchProcessor({
      deliveries: rows,
      sent: createSentOutcomes({ journal: sentJournal(), deliveries: rows, logger: memoryLogger().logger }),
      findTemplate: (name, enterpriseId) => service.services.templateCache.find(name, enterpriseId),
      rereadTemplate: (name, enterpriseId) => service.services.templateCache.reread(name, enterpriseId),
      otpStatus: (otpUuid) => createOtpsRepository(service.ctx.mongo).statusOf(otpUuid),
      providers: { sms: { name: 'outbox', send: count }, email: { name: 'outbox', send: count } },
      encryptionKey: otpKeysFromConfig(service.config).encryptionKey,
      logger: memoryLogger().logger,
    });
    return { processor, sends };
  }

  async function generate(overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('bob', overrides));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  /** A fresh OTP's SMS dispatch job, still waiting (no worker runs). */
  async function queuedSmsJob(): Promise<{ otpUuid: string; deliveryId: string; job: Job<DispatchJobData> }> {
    const otpUuid = await generate();
    const deliveryId = `otp-${otpUuid}-SMS`;
    const job = await service.ctx.queues.dispatch.getJob(deliveryId);
    if (!job) throw new Error('no dispatch job');
    return { otpUuid, deliveryId, job: job as Job<DispatchJobData> };
  }

  async function deliveries(otpUuid: string): Promise<DeliveryState[]> {
    const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { deliveries: DeliveryState[] }).deliveries;
  }

  const settled = (otpUuid: string, state: string) =>
    eventually(async () => {
      const rows = await deliveries(otpUuid);
      return rows.every((d) => d.state === state) ? rows : undefined;
    });

  test('when Twilio and SendGrid are configured, then the real SDKs send to the Prism mocks and the deliveries are SENT', async () => {
    const twilioMock = process.env.TEST_TWILIO_MOCK_URL as string;
    const sendgridMock = process.env.TEST_SENDGRID_MOCK_URL as string;
    worker = await startWorker({
      ...twilioEnv(twilioMock),
      SENDGRID_API_KEY: 'SG.test-key.0123456789',
      SENDGRID_API_BASE_URL: `${sendgridMock}/`,
      EMAIL_FROM: 'otp@example.com',
    });
    const otpUuid = await generate({ dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } });
    const rows = await settled(otpUuid, 'SENT');
    expect(rows).toEqual([
      { channel: 'EMAIL', state: 'SENT', providerMessageId: expect.any(String), updatedAt: expect.any(String) },
      { channel: 'SMS', state: 'SENT', providerMessageId: expect.any(String), updatedAt: expect.any(String) },
    ]);
  });

  test('when the provider answers 500 then 201, then the job is retried and the message is sent once', async () => {
    stub = await startProviderStub([{ status: 500, body: { code: 20500, message: 'Internal Server Error', status: 500 } }, accepted]);
    worker = await startWorker(twilioEnv(stub.url));
    const otpUuid = await generate();
    const rows = await settled(otpUuid, 'SENT');
    expect(rows).toEqual([
      { channel: 'SMS', state: 'SENT', providerMessageId: 'SM11111111111111111111111111111111', updatedAt: expect.any(String) },
    ]);
    expect(stub.requests).toHaveLength(2);
    const form = new URLSearchParams(stub.requests[1]?.body);
    expect(form.get('To')).toBe(mobile);
    expect(form.get('Body')).toMatch(/^Your verification code is [0-9]{6}\. Do not share it with anyone\.$/);
  });

  test('when the provider refuses the number (Twilio 21211), then the delivery fails at once with the reason', async () => {
    stub = await startProviderStub([
      { status: 400, body: { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 } },
    ]);
    worker = await startWorker(twilioEnv(stub.url));
    const otpUuid = await generate();
    const rows = await settled(otpUuid, 'FAILED');
    expect(rows).toEqual([
      {
        channel: 'SMS',
        state: 'FAILED',
        provider: 'twilio',
        lastError: expect.stringContaining('not a valid phone number'),
        updatedAt: expect.any(String),
      },
    ]);
    // The job failed for good (a job that will be retried waits as delayed): no second try comes.
    expect(await jobEnded(service.ctx.queues.dispatch, `otp-${otpUuid}-SMS`)).toBe('failed');
    expect(stub.requests).toHaveLength(1);
  });

  test('when Twilio names the number in its refusal, then the failed job kept in Redis shows it masked, as the logs do', async () => {
    stub = await startProviderStub([
      { status: 400, body: { code: 21211, message: `The 'To' number ${mobile} is not a valid phone number.`, status: 400 } },
    ]);
    worker = await startWorker(twilioEnv(stub.url));
    const otpUuid = await generate();
    const [row] = await settled(otpUuid, 'FAILED');
    // The row keeps the provider's text for the client that made the OTP (docs/security.md, Logs).
    expect(row?.lastError).toContain(mobile);
    expect(await jobEnded(service.ctx.queues.dispatch, `otp-${otpUuid}-SMS`)).toBe('failed');
    const job = await service.ctx.queues.dispatch.getJob(`otp-${otpUuid}-SMS`);
    expect(job?.failedReason).toBe("The 'To' number +*********99 is not a valid phone number. (Twilio 21211)");
    expect((job?.stacktrace ?? []).join('\n')).toContain('+*********99');
    expect(JSON.stringify(job)).not.toContain(mobile.slice(1));
  });

  /** The waiting dispatch job of an OTP's SMS, replaced by one with `data` (what the job carries). */
  async function replaceJob(otpUuid: string, data: (current: DispatchJobData) => DispatchJobData): Promise<void> {
    const queue = service.ctx.queues.dispatch;
    const job = await queue.getJob(`otp-${otpUuid}-SMS`);
    if (!job) throw new Error('no dispatch job');
    const next = data(job.data as DispatchJobData);
    await job.remove();
    await queue.add(job.name, next, { ...job.opts, jobId: job.id });
  }

  test('when a fresh OTP is queued, then its job carries the row sealed (no address or code in clear); a resumed request makes the worker read the row', async () => {
    const otpUuid = await generate();
    const job = await service.ctx.queues.dispatch.getJob(`otp-${otpUuid}-SMS`);
    const data = job?.data as DispatchJobData;
    expect(Object.keys(data).sort()).toEqual(['deliveryId', 'sealed']);
    expect(JSON.stringify(data)).not.toContain(mobile.slice(2));
    expect(JSON.stringify(data)).not.toContain('otp_sms');
    const opened = openDelivery(data.sealed as string, data.deliveryId, otpKeysFromConfig(service.config).encryptionKey, new Date());
    expect(opened).toMatchObject({ id: `otp-${otpUuid}-SMS`, to: mobile, template: 'otp_sms', state: 'QUEUED' });
    // Bound to its delivery: the same envelope does not open for another id.
    expect(() =>
      openDelivery(data.sealed as string, 'otp-other-SMS', otpKeysFromConfig(service.config).encryptionKey, new Date()),
    ).toThrow();

    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('bob'), { 'Idempotency-Key': `sealed-${otpUuid}` });
    const resumed = ((await res.json()) as { otpUuid: string }).otpUuid;
    expect((await service.ctx.queues.dispatch.getJob(`otp-${resumed}-SMS`))?.data).toEqual({ deliveryId: `otp-${resumed}-SMS` });
    // No worker ran: these jobs must not reach the next test's provider stub.
    await service.ctx.queues.dispatch.drain();
  });

  test('when a sealed job runs again after its send was recorded (a stalled or retried run), then it reads the row and sends nothing', async () => {
    const { deliveryId, job } = await queuedSmsJob();
    expect(typeof (job.data as DispatchJobData).sealed).toBe('string');
    // The first run sent and recorded it, then died before BullMQ marked the job completed.
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: deliveryId as never }, { $set: { state: 'SENT', providerMessageId: 'SMfirst' } });
    const { processor, sends } = countingProcessor();
    job.stalledCounter = 1;
    await expect(processor(job as Job<DispatchJobData>)).resolves.toEqual({ state: 'SKIPPED', reason: 'already SENT' });
    job.stalledCounter = 0;
    job.attemptsMade = 1;
    await expect(processor(job as Job<DispatchJobData>)).resolves.toEqual({ state: 'SKIPPED', reason: 'already SENT' });
    expect(sends).toHaveLength(0);
    await service.ctx.queues.dispatch.drain();
  });

  test('when a job runs again after its send was journaled but before the row shows it, then it writes the row and sends nothing', async () => {
    const { deliveryId, job } = await queuedSmsJob();
    const journal = sentJournal();
    const sentAt = new Date();
    // The first run sent and journaled it, then died before its row was written.
    await journal.write({ deliveryId, providerMessageId: 'SMjournaled', attempts: 1, sentAt });
    const { processor, sends } = countingProcessor();
    job.stalledCounter = 1;
    await expect(processor(job as Job<DispatchJobData>)).resolves.toEqual({ state: 'SKIPPED', reason: 'already SENT' });
    expect(sends).toHaveLength(0);
    expect(await service.ctx.mongo.collection('deliveries').findOne({ _id: deliveryId as never })).toMatchObject({
      state: 'SENT',
      providerMessageId: 'SMjournaled',
    });
    expect(await journal.find([deliveryId])).toEqual([]);
    await service.ctx.queues.dispatch.drain();
  });

  test('when the row is too large to seal into a job (long macro values), then the job carries only the id and the message is still sent', async () => {
    stub = await startProviderStub([accepted]);
    const dynamicMacros = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`__FILLER_${i}__`, 'x'.repeat(1000)]));
    const otpUuid = await generate({ dynamicMacros });
    expect((await service.ctx.queues.dispatch.getJob(`otp-${otpUuid}-SMS`))?.data).toEqual({ deliveryId: `otp-${otpUuid}-SMS` });
    worker = await startWorker(twilioEnv(stub.url));
    await settled(otpUuid, 'SENT');
    expect(stub.requests).toHaveLength(1);
  });

  test('when an OTP expires before a worker picks it up, then it is never sent, whether its job is sealed or reads the row', async () => {
    stub = await startProviderStub([accepted]);
    const past = new Date(Date.now() - 1000);
    const { encryptionKey } = otpKeysFromConfig(service.config);
    const sealedUuid = await generate();
    const readUuid = await generate();
    for (const otpUuid of [sealedUuid, readUuid]) {
      await service.ctx.mongo.collection('deliveries').updateMany({ refId: otpUuid }, { $set: { notAfter: past } });
    }
    await replaceJob(sealedUuid, (d) => ({
      ...d,
      sealed: sealDelivery({ ...openDelivery(d.sealed as string, d.deliveryId, encryptionKey, new Date()), notAfter: past }, encryptionKey),
    }));
    await replaceJob(readUuid, (d) => ({ deliveryId: d.deliveryId }));
    worker = await startWorker(twilioEnv(stub.url));
    for (const otpUuid of [sealedUuid, readUuid]) {
      const rows = await settled(otpUuid, 'FAILED');
      expect(rows[0]?.lastError).toBe('expired before it could be sent');
    }
    expect(stub.requests).toHaveLength(0);
  });

  test("when a job was sealed without its enterprise (by a version before templates had owners), then the worker reads the row and renders with that enterprise's templates, not default's own", async () => {
    const { encryptionKey } = otpKeysFromConfig(service.config);
    const other = await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'sealedent' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'sealedent', userId: 'sam', mobileNumber: '+15550662001' });
    const res = await postJson(`${service.url}/v1/svc-otp`, other.accessToken, otpBody('sam'));
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const deliveryId = `otp-${otpUuid}-SMS`;
    const job = (await service.ctx.queues.dispatch.getJob(deliveryId)) as Job<DispatchJobData>;
    const { enterpriseId, ...asSealedBefore } = openDelivery(job.data.sealed as string, deliveryId, encryptionKey, new Date());
    expect(enterpriseId).toBe('sealedent');
    const oldJob = { ...job, data: { deliveryId, sealed: sealDelivery(asSealedBefore, encryptionKey) } } as unknown as Job<DispatchJobData>;
    // This test runs the job itself: no later test's worker takes it.
    await job.remove();

    const admin = { authorization: `Bearer ${service.config.adminToken ?? ''}`, 'content-type': 'application/json' };
    const own = await fetch(`${service.url}/admin/templates`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'otp_sms', channel: 'SMS', text: 'Default only: __SVC_OTP__', enterpriseId: 'default' }),
    });
    expect(own.status).toBe(201);
    try {
      const { processor, sends } = countingProcessor();
      await processor(oldJob);
      expect(sends).toEqual([
        expect.objectContaining({ to: '+15550662001', text: expect.stringMatching(/^Your verification code is \d+\./) }),
      ]);
    } finally {
      await fetch(`${service.url}/admin/templates/otp_sms?enterpriseId=default`, { method: 'DELETE', headers: admin });
    }
  });

  test('when a sealed job was tampered with, then the worker trusts the row instead and sends to its address', async () => {
    stub = await startProviderStub([accepted]);
    const otpUuid = await generate();
    await replaceJob(otpUuid, (d) => ({ ...d, sealed: `${(d.sealed as string).slice(0, -4)}AAAA` }));
    worker = await startWorker(twilioEnv(stub.url));
    await settled(otpUuid, 'SENT');
    expect(stub.requests).toHaveLength(1);
    expect(new URLSearchParams(stub.requests[0]?.body).get('To')).toBe(mobile);
  });

  test('when Twilio posts a signed delivered receipt, then the delivery becomes DELIVERED; a forged one is refused', async () => {
    stub = await startProviderStub([{ status: 201, body: { sid: 'SM22222222222222222222222222222222', status: 'queued' } }]);
    worker = await startWorker(twilioEnv(stub.url));
    const otpUuid = await generate();
    await settled(otpUuid, 'SENT');
    const callback = new URLSearchParams(stub.requests[0]?.body).get('StatusCallback');
    expect(callback).toBe(`${service.config.publicUrl}/webhooks/twilio/status`);
    const params = { MessageSid: 'SM22222222222222222222222222222222', MessageStatus: 'delivered' };
    const forged = await postTwilioStatus(service, params, 'not-the-token');
    expect(forged.status).toBe(403);
    expect((await deliveries(otpUuid))[0]?.state).toBe('SENT');
    const genuine = await postTwilioStatus(service, params, TWILIO_TOKEN);
    expect(genuine.status).toBe(204);
    expect((await deliveries(otpUuid))[0]).toEqual({
      channel: 'SMS',
      state: 'DELIVERED',
      providerMessageId: 'SM22222222222222222222222222222222',
      updatedAt: expect.any(String),
    });
  });

  test('when a receipt arrives before its row says SENT (the send is only journaled yet), then the send is written and the receipt applied', async () => {
    const otpUuid = await generate();
    await service.ctx.queues.dispatch.drain();
    const deliveryId = `otp-${otpUuid}-SMS`;
    const providerMessageId = 'SM55555555555555555555555555555555';
    await sentJournal().write({ deliveryId, providerMessageId, attempts: 1, sentAt: new Date() });
    const res = await postTwilioStatus(service, { MessageSid: providerMessageId, MessageStatus: 'delivered' }, TWILIO_TOKEN);
    expect(res.status).toBe(204);
    expect((await deliveries(otpUuid))[0]).toMatchObject({ channel: 'SMS', state: 'DELIVERED', providerMessageId });
    expect(await sentJournal().find([deliveryId])).toEqual([]);
  });

  test("when a delivered receipt arrives before the worker has even journaled its send (Twilio's answer still on its way), then the delivery ends DELIVERED once the send is recorded", async () => {
    const providerMessageId = 'SM66666666666666666666666666666666';
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    stub = await startProviderStub([{ status: 201, body: { sid: providerMessageId, status: 'queued' }, until: answered }]);
    worker = await startWorker(twilioEnv(stub.url));
    const otpUuid = await generate();
    // Twilio has the message (and calls back), the worker still waits for Twilio's answer.
    await eventually(async () => (stub?.requests.length === 1 ? true : undefined));
    const res = await postTwilioStatus(service, { MessageSid: providerMessageId, MessageStatus: 'delivered' }, TWILIO_TOKEN);
    expect(res.status).toBe(204);
    expect((await deliveries(otpUuid))[0]).toMatchObject({ channel: 'SMS', state: 'QUEUED' });
    answer();
    const [delivered] = await settled(otpUuid, 'DELIVERED');
    expect(delivered).toMatchObject({ channel: 'SMS', state: 'DELIVERED', providerMessageId });
    expect(await sentJournal().find([`otp-${otpUuid}-SMS`])).toEqual([]);
  });
});
