import mongoose from 'mongoose';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries } from '../../core/deliveries/delivery-sweeper.js';
import { createSentJournal, type SentOutcome } from '../../core/deliveries/sent-journal.js';
import { createSentOutcomes } from '../../core/deliveries/sent-outcomes.js';
import { loadConfig } from '../../core/config/config.js';
import { requeueDispatch } from '../../core/queues/dispatch.queue.js';
import { createProducerRedis } from '../../core/queues/redis-connection.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

interface Row {
  state: string;
  providerMessageId?: string;
  attempts: number;
  secretMacros?: string;
  updatedAt: Date;
}

describe('Sent messages: journaled in Redis before the job ends, written to the rows after', () => {
  let service: TestService;
  let token: string;
  const mobile = '+15550007777';

  beforeAll(async () => {
    service = await startTestService('sentjournal', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'sam', mobileNumber: mobile });
  });
  afterAll(async () => {
    await service.close();
  });

  const journal = () => createSentJournal(service.ctx.redis, service.config.queuePrefix);
  const deliveries = () => createDeliveriesRepository(service.ctx.mongo);
  const row = async (deliveryId: string) => (await service.ctx.mongo.collection('deliveries').findOne({ _id: deliveryId as never })) as Row | null;
  const journalSize = () => service.ctx.redis.hlen(`${service.config.queuePrefix}:dispatch:sent`);

  /** An accepted OTP whose SMS delivery is QUEUED and whose job nobody runs. */
  async function queuedDelivery(): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sam'));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    await service.ctx.queues.dispatch.drain();
    const deliveryId = `otp-${otpUuid}-SMS`;
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    return deliveryId;
  }

  const outcome = (deliveryId: string, sentAt = new Date()): SentOutcome => ({ deliveryId, providerMessageId: `SM-${deliveryId.slice(4, 12)}`, attempts: 1, sentAt });

  test('when a worker sends, then the row says SENT and the journal is empty again', async () => {
    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sam'));
      const { otpUuid } = (await res.json()) as { otpUuid: string };
      await outboxMessageFor(service, mobile, otpUuid);
      const sent = await eventually(async () => {
        const r = await row(`otp-${otpUuid}-SMS`);
        return r?.state === 'SENT' ? r : undefined;
      });
      expect(sent).toMatchObject({ state: 'SENT', providerMessageId: expect.any(String), attempts: 1 });
      expect(sent.secretMacros).toBeUndefined();
      expect(await eventually(async () => ((await journalSize()) === 0 ? 0 : undefined))).toBe(0);
    } finally {
      await worker.shutdown();
    }
  });

  test('when a send is recorded, then it is journaled at once and on the row once written (at the latest on close)', async () => {
    const deliveryId = await queuedDelivery();
    const sent = createSentOutcomes({ journal: journal(), deliveries: deliveries(), logger: memoryLogger().logger, lingerMs: 60_000 });
    const recorded = outcome(deliveryId);
    await sent.record(recorded);
    expect(await journal().find([deliveryId])).toEqual([recorded]);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    await sent.close();
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: recorded.providerMessageId, attempts: 1, updatedAt: recorded.sentAt });
    expect(await journal().find([deliveryId])).toEqual([]);
  });

  test('when a send is journaled but its row not written yet, then the status endpoint already reports it SENT', async () => {
    const deliveryId = await queuedDelivery();
    const recorded = outcome(deliveryId);
    await journal().write(recorded);
    const otpUuid = deliveryId.slice(4, -4);
    const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deliveries: unknown[] };
    expect(body.deliveries).toEqual([{ channel: 'SMS', state: 'SENT', providerMessageId: recorded.providerMessageId, updatedAt: recorded.sentAt.toISOString() }]);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    await journal().forget([deliveryId]);
  });

  test('when MongoDB cannot take the write, then the send stays journaled and the next sweep writes it without sending again', async () => {
    const deliveryId = await queuedDelivery();
    const unreachable = mongoose.createConnection('mongodb://127.0.0.1:1/nowhere', { serverSelectionTimeoutMS: 300, bufferCommands: false });
    unreachable.on('error', () => undefined);
    const log = memoryLogger();
    const sent = createSentOutcomes({ journal: journal(), deliveries: createDeliveriesRepository(unreachable), logger: log.logger, lingerMs: 1 });
    try {
      await sent.record(outcome(deliveryId));
      await sent.close();
    } finally {
      await unreachable.close();
    }
    expect(log.lines().some((line) => line.msg === 'sent outcomes not written yet; left in the journal')).toBe(true);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    expect(await journal().find([deliveryId])).toHaveLength(1);

    const sweep = await sweepDeliveries(
      { deliveries: deliveries(), journal: journal(), enqueue: (id) => requeueDispatch(service.ctx.queues.dispatch, id), logger: memoryLogger().logger, graceMs: 60_000 },
      new Date(Date.now() + 2000),
    );
    expect(sweep).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: outcome(deliveryId).providerMessageId });
    expect(await journal().find([deliveryId])).toEqual([]);
    expect(await service.ctx.queues.dispatch.getJob(deliveryId)).toBeUndefined();
  });

  test('when a worker died right after journaling and its finished job is gone, then the sweeper writes the send instead of enqueueing it again', async () => {
    const deliveryId = await queuedDelivery();
    const now = new Date();
    // Journaled just now (not yet an orphan by age) for a row left QUEUED past the grace period.
    await journal().write(outcome(deliveryId, new Date(now.getTime() - 100)));
    await service.ctx.mongo.collection('deliveries').updateOne({ _id: deliveryId as never }, { $set: { updatedAt: new Date(now.getTime() - 120_000) } });
    const enqueued: string[] = [];
    const sweep = await sweepDeliveries(
      { deliveries: deliveries(), journal: journal(), enqueue: async (id) => void enqueued.push(id), logger: memoryLogger().logger, graceMs: 60_000 },
      now,
    );
    expect(sweep).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(enqueued).toEqual([]);
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT' });
  });

  test('when Redis refuses the journal entry, then the row itself is written before the job ends', async () => {
    const deliveryId = await queuedDelivery();
    const deadRedis = createProducerRedis('redis://127.0.0.1:1', { retryStrategy: () => null, lazyConnect: true });
    const log = memoryLogger();
    const sent = createSentOutcomes({ journal: createSentJournal(deadRedis, service.config.queuePrefix), deliveries: deliveries(), logger: log.logger, lingerMs: 60_000 });
    try {
      await sent.record(outcome(deliveryId));
      expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: outcome(deliveryId).providerMessageId });
      expect(log.lines().some((line) => line.msg === 'sent outcome not journaled; writing the row directly')).toBe(true);
    } finally {
      deadRedis.disconnect();
    }
  });
});
