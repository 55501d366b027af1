import mongoose from 'mongoose';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries, type SweeperDeps } from '../../core/deliveries/delivery-sweeper.js';
import { createEarlyReceiptStore, type EarlyReceiptsOnSend } from '../../core/deliveries/early-receipts.js';
import { createSentJournal, type SentOutcome } from '../../core/deliveries/sent-journal.js';
import { createSentOutcomes, SendBacklogError } from '../../core/deliveries/sent-outcomes.js';
import { loadConfig } from '../../core/platform/config/config.js';
import { createDeliveryReceipts } from '../../core/providers/delivery-receipts.service.js';
import { requeueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { createProducerRedis, waitForRedis } from '../../core/platform/queues/redis-connection.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { connectToNodeOf } from '../support/redis-node.js';
import { firstTestMongoHost, testMongoUriVia } from '../support/test-mongo-uri.js';
import { insertUser } from '../support/user-fixtures.js';

interface Row {
  state: string;
  provider?: string;
  providerMessageId?: string;
  lastError?: string;
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
  // Each test starts from an empty journal, whatever an earlier one left.
  beforeEach(async () => {
    await service.ctx.redis.del(journalKey(), `${service.config.queuePrefix}:dispatch:sent-by-provider-id`);
  });

  const journalKey = () => `${service.config.queuePrefix}:dispatch:sent`;
  const journal = () => createSentJournal(service.ctx.redis, service.config.queuePrefix);
  const deliveries = () => createDeliveriesRepository(service.ctx.mongo);
  const row = async (deliveryId: string) =>
    (await service.ctx.mongo.collection('deliveries').findOne({ _id: deliveryId as never })) as Row | null;
  const sweepDeps = (logger = memoryLogger().logger): SweeperDeps => ({
    deliveries: deliveries(),
    journal: journal(),
    enqueue: (id) => requeueDispatch(service.ctx.queues.dispatch, id),
    logger,
    graceMs: 60_000,
  });

  /** An accepted OTP whose SMS delivery is QUEUED and whose job is gone (as after it finished). */
  async function queuedDelivery(): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sam'));
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    await service.ctx.queues.dispatch.drain();
    const deliveryId = `otp-${otpUuid}-SMS`;
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    expect(await service.ctx.queues.dispatch.getJob(deliveryId)).toBeUndefined();
    return deliveryId;
  }

  const outcome = (deliveryId: string, sentAt = new Date()): SentOutcome => ({
    deliveryId,
    providerMessageId: `SM-${deliveryId.slice(4, 12)}`,
    attempts: 1,
    sentAt,
  });

  test('when a worker sends, then it journals the send, the row says SENT and the journal is empty again', async () => {
    const journaled: string[] = [];
    const observer = await connectToNodeOf(service.ctx.redis, journalKey());
    const monitor = await observer.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'hset' && args[1] === journalKey()) journaled.push(args[2] as string);
    });
    const log = memoryLogger();
    const worker = await startDispatchWorker(loadConfig(service.env), log.logger);
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
      // Said at once, rather than as a journal write that never comes.
      expect(log.lines().filter((line) => line.msg === 'sent outcome not journaled; writing the row directly')).toEqual([]);
      expect(await eventually(async () => (journaled.includes(`otp-${otpUuid}-SMS`) ? true : undefined))).toBe(true);
      expect(await eventually(async () => ((await service.ctx.redis.hlen(journalKey())) === 0 ? 0 : undefined))).toBe(0);
    } finally {
      await worker.shutdown();
      monitor.disconnect();
      observer.disconnect();
    }
  });

  test('when a send is recorded, then it is journaled at once and on the row once written (at the latest on close)', async () => {
    const deliveryId = await queuedDelivery();
    const sent = createSentOutcomes({ journal: journal(), deliveries: deliveries(), logger: memoryLogger().logger, lingerMs: 2000 });
    const recorded = outcome(deliveryId);
    await sent.record(recorded);
    expect(await journal().find([deliveryId])).toEqual([recorded]);
    expect(await journal().findByProviderMessageId(recorded.providerMessageId)).toEqual(recorded);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    await sent.close();
    expect(await row(deliveryId)).toMatchObject({
      state: 'SENT',
      providerMessageId: recorded.providerMessageId,
      attempts: 1,
      updatedAt: recorded.sentAt,
    });
    expect(await journal().find([deliveryId])).toEqual([]);
    expect(await journal().findByProviderMessageId(recorded.providerMessageId)).toBeUndefined();
  });

  test("when a send is journaled but its row not written yet, then the status endpoint already reports it SENT, without an earlier attempt's error", async () => {
    const deliveryId = await queuedDelivery();
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: deliveryId as never }, { $set: { lastError: 'Twilio answered 500', attempts: 1 } });
    const recorded = { ...outcome(deliveryId), attempts: 2 };
    await journal().write(recorded);
    const otpUuid = deliveryId.slice(4, -4);
    const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deliveries: unknown[] };
    expect(body.deliveries).toEqual([
      { channel: 'SMS', state: 'SENT', providerMessageId: recorded.providerMessageId, updatedAt: recorded.sentAt.toISOString() },
    ]);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    // Also over the sweeper's "expired before it could be sent", which the send will override.
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: deliveryId as never }, { $set: { state: 'FAILED', lastError: 'expired before it could be sent' } });
    const again = (await (
      await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { deliveries: unknown[] };
    expect(again.deliveries).toEqual(body.deliveries);
  });

  test('when MongoDB cannot take the write, then the send stays journaled and the next sweep writes it without sending again', async () => {
    const deliveryId = await queuedDelivery();
    const unreachable = mongoose.createConnection('mongodb://127.0.0.1:1/nowhere', {
      serverSelectionTimeoutMS: 300,
      bufferCommands: false,
    });
    unreachable.on('error', () => undefined);
    const log = memoryLogger();
    const sent = createSentOutcomes({
      journal: journal(),
      deliveries: createDeliveriesRepository(unreachable),
      logger: log.logger,
      lingerMs: 1,
    });
    try {
      await sent.record(outcome(deliveryId));
      await sent.close();
    } finally {
      await unreachable.close();
    }
    expect(log.lines().some((line) => line.msg === 'sent outcomes not written yet; left in the journal')).toBe(true);
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    expect(await journal().find([deliveryId])).toHaveLength(1);

    const sweep = await sweepDeliveries(sweepDeps(), new Date(Date.now() + 2000));
    expect(sweep).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: outcome(deliveryId).providerMessageId });
    expect(await journal().find([deliveryId])).toEqual([]);
    expect(await service.ctx.queues.dispatch.getJob(deliveryId)).toBeUndefined();
  });

  test('when MongoDB stops answering mid-write, then the write is given up after its timeout and the send stays journaled', async () => {
    const deliveryId = await queuedDelivery();
    const hello = (await service.ctx.mongo.db?.admin().command({ isMaster: 1 })) as { primary?: unknown } | undefined;
    const proxy = await startFreezableProxy(typeof hello?.primary === 'string' ? hello.primary : firstTestMongoHost());
    const viaProxy = await connectMongo(testMongoUriVia(proxy.address, service.ctx.mongo.name));
    const log = memoryLogger();
    const rows = createDeliveriesRepository(viaProxy);
    await rows.findById(deliveryId);
    proxy.freeze();
    const sent = createSentOutcomes({ journal: journal(), deliveries: rows, logger: log.logger, lingerMs: 1, writeTimeoutMs: 300 });
    try {
      await sent.record(outcome(deliveryId));
      await sent.close();
      expect(log.lines().some((line) => line.msg === 'sent outcome write timed out; left in the journal')).toBe(true);
      expect(await journal().find([deliveryId])).toHaveLength(1);
      expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    } finally {
      await proxy.close();
      await viaProxy.close(true).catch(() => undefined);
      await journal().forget([outcome(deliveryId)]);
    }
  });

  test('when a worker died right after journaling and its finished job is gone, then the sweeper writes the send instead of enqueueing it again', async () => {
    const deliveryId = await queuedDelivery();
    const now = new Date();
    // Journaled just now (not yet an orphan by age) for a row left QUEUED past the grace period.
    await journal().write(outcome(deliveryId, new Date(now.getTime() - 100)));
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: deliveryId as never }, { $set: { updatedAt: new Date(now.getTime() - 120_000) } });
    const sweep = await sweepDeliveries(sweepDeps(), now);
    expect(sweep).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(await service.ctx.queues.dispatch.getJob(deliveryId)).toBeUndefined();
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT' });
  });

  test('when a send is journaled just as its OTP expires and the sweeper ends the row as unsent first, then the send still wins', async () => {
    const deliveryId = await queuedDelivery();
    const now = new Date();
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: deliveryId as never }, { $set: { notAfter: new Date(now.getTime() - 50) } });
    await journal().write(outcome(deliveryId, new Date(now.getTime() - 100)));
    expect(await sweepDeliveries(sweepDeps(), now)).toEqual({ recovered: 0, expired: 1, requeued: 0 });
    expect(await row(deliveryId)).toMatchObject({ state: 'FAILED', lastError: 'expired before it could be sent' });
    expect(await sweepDeliveries(sweepDeps(), new Date(now.getTime() + 2000))).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: outcome(deliveryId).providerMessageId });
  });

  test('when Redis is down during a sweep, then expired rows are still ended and nothing is re-enqueued', async () => {
    const expiredId = await queuedDelivery();
    const staleId = await queuedDelivery();
    const now = new Date();
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: expiredId as never }, { $set: { notAfter: new Date(now.getTime() - 1000) } });
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: staleId as never }, { $set: { updatedAt: new Date(now.getTime() - 120_000) } });
    const closedRedis = createProducerRedis(service.config.redis);
    expect(await waitForRedis(closedRedis)).toBe(true);
    await closedRedis.quit();
    const log = memoryLogger();
    const enqueued: string[] = [];
    const sweep = await sweepDeliveries(
      {
        ...sweepDeps(log.logger),
        journal: createSentJournal(closedRedis, service.config.queuePrefix),
        enqueue: async (id) => enqueued.push(id) > 0,
      },
      now,
    );
    expect(sweep).toEqual({ recovered: 0, expired: 1, requeued: 0 });
    expect(enqueued).toEqual([]);
    expect(await row(expiredId)).toMatchObject({ state: 'FAILED', lastError: 'expired before it could be sent' });
    expect(await row(staleId)).toMatchObject({ state: 'QUEUED' });
    expect(log.lines().some((line) => line.msg === 'sweeper could not read or apply the sent journal; will retry')).toBe(true);
  });

  test('when the journal holds an entry this code did not write, then sweeps go on and drop it', async () => {
    await service.ctx.redis.hset(journalKey(), 'otp-garbage-SMS', 'not json');
    const sweep = await sweepDeliveries(sweepDeps(), new Date(Date.now() + 2000));
    expect(sweep.recovered).toBe(0);
    expect(await service.ctx.redis.hexists(journalKey(), 'otp-garbage-SMS')).toBe(0);
  });

  test('when too many sends wait for their rows, then sending pauses until the rows catch up', async () => {
    const first = await queuedDelivery();
    const second = await queuedDelivery();
    const sent = createSentOutcomes({
      journal: journal(),
      deliveries: deliveries(),
      logger: memoryLogger().logger,
      lingerMs: 2000,
      maxBacklog: 1,
    });
    await sent.admitSend();
    await sent.record(outcome(first));
    await sent.record(outcome(second));
    await expect(sent.admitSend()).rejects.toBeInstanceOf(SendBacklogError);
    await sent.close();
    await expect(sent.admitSend()).resolves.toBeUndefined();
    expect(await row(second)).toMatchObject({ state: 'SENT' });
  });

  test('when too many sends wait for their rows, then a worker delays its jobs without sending or using up attempts, and sends once they are written', async () => {
    const worker = await startDispatchWorker(loadConfig({ ...service.env, SENT_JOURNAL_MAX_BACKLOG: '1' }), memoryLogger().logger);
    try {
      // Two sends whose rows MongoDB has not taken yet (not old enough for the sweeper either).
      for (const id of ['otp-behind-1-SMS', 'otp-behind-2-SMS']) await journal().write(outcome(id));
      const first = (await (await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sam'))).json()) as { otpUuid: string };
      await outboxMessageFor(service, mobile, first.otpUuid);
      const second = (await (await postJson(`${service.url}/v1/svc-otp`, token, otpBody('sam'))).json()) as { otpUuid: string };
      const paused = await eventually(async () => {
        const job = await service.ctx.queues.dispatch.getJob(`otp-${second.otpUuid}-SMS`);
        return job && (await job.getState()) === 'delayed' ? job : undefined;
      });
      expect(paused.attemptsMade).toBe(0);
      expect((await row(`otp-${second.otpUuid}-SMS`))?.state).toBe('QUEUED');

      await service.ctx.redis.hdel(journalKey(), 'otp-behind-1-SMS', 'otp-behind-2-SMS');
      await outboxMessageFor(service, mobile, second.otpUuid);
      const sent = await eventually(async () => {
        const r = await row(`otp-${second.otpUuid}-SMS`);
        return r?.state === 'SENT' ? r : undefined;
      });
      expect(sent.attempts).toBe(1);
    } finally {
      await worker.shutdown();
    }
  });

  test('when Redis is down as a receipt for an unknown message arrives, then the receipt is handled (nothing updated) instead of failing', async () => {
    const closedRedis = createProducerRedis(service.config.redis);
    expect(await waitForRedis(closedRedis)).toBe(true);
    await closedRedis.quit();
    const log = memoryLogger();
    const onReceipt = createDeliveryReceipts({
      deliveries: deliveries(),
      journal: createSentJournal(closedRedis, service.config.queuePrefix),
      early: createEarlyReceiptStore(closedRedis, service.config.queuePrefix),
      logger: log.logger,
    }).record;
    await expect(onReceipt({ provider: 'twilio', providerMessageId: 'SMunknown', state: 'DELIVERED' })).resolves.toBeUndefined();
    expect(log.lines().find((line) => line.msg === 'delivery receipt')).toMatchObject({ updated: 0 });
    expect(log.lines().some((line) => line.msg === 'sent journal unavailable for a receipt')).toBe(true);
  });

  const earlyKey = (providerMessageId: string) => `${service.config.queuePrefix}:dispatch:early-receipt:${providerMessageId}`;
  const earlyStore = () => createEarlyReceiptStore(service.ctx.redis, service.config.queuePrefix);

  test('when a receipt arrives before its send is journaled, then it waits in Redis for 5 minutes at most and is applied once the send reaches the row; a late repeat changes nothing', async () => {
    const deliveryId = await queuedDelivery();
    const sentAs = outcome(deliveryId);
    const log = memoryLogger();
    const receipts = createDeliveryReceipts({ deliveries: deliveries(), journal: journal(), early: earlyStore(), logger: log.logger });
    // A SendGrid event names the message by its id and by our reference: it waits under both.
    const bounce = {
      provider: 'sendgrid' as const,
      providerMessageId: `sg-${deliveryId.slice(4, 12)}`,
      reference: sentAs.providerMessageId,
      state: 'FAILED' as const,
      error: 'bounce: 550 no such user',
    };
    await receipts.record(bounce);
    expect(log.lines().find((line) => line.msg === 'delivery receipt')).toMatchObject({ updated: 0, waitsForSend: true });
    expect(await row(deliveryId)).toMatchObject({ state: 'QUEUED' });
    for (const id of [bounce.providerMessageId, bounce.reference]) {
      const ttl = await service.ctx.redis.pttl(earlyKey(id));
      expect(ttl).toBeGreaterThan(290_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
    }

    const sent = createSentOutcomes({
      journal: journal(),
      deliveries: deliveries(),
      earlyReceipts: receipts.applyEarly,
      logger: log.logger,
    });
    await sent.record(sentAs);
    await sent.close();
    expect(await row(deliveryId)).toMatchObject({
      state: 'FAILED',
      providerMessageId: sentAs.providerMessageId,
      provider: 'sendgrid',
      lastError: 'bounce: 550 no such user',
    });
    expect(await service.ctx.redis.exists(earlyKey(sentAs.providerMessageId))).toBe(0);
    expect(await journal().find([deliveryId])).toEqual([]);

    await receipts.record({ ...bounce, state: 'DELIVERED', error: undefined });
    await receipts.record(bounce);
    expect(await row(deliveryId)).toMatchObject({ state: 'FAILED', lastError: 'bounce: 550 no such user' });
  });

  test('when the send reaches its row just before the receipt is kept, then the receipt reads the row again and is applied there', async () => {
    const deliveryId = await queuedDelivery();
    const sentAs = outcome(deliveryId);
    const store = earlyStore();
    let applyEarly: EarlyReceiptsOnSend = { applyTo: () => Promise.resolve() };
    const sent = createSentOutcomes({
      journal: journal(),
      deliveries: deliveries(),
      earlyReceipts: { applyTo: (outcomes) => applyEarly.applyTo(outcomes) },
      logger: memoryLogger().logger,
    });
    // The receipt found neither the row nor the journal entry; the whole send is written before it is kept.
    const sendWrittenFirst = {
      ...store,
      hold: async (...args: Parameters<typeof store.hold>) => {
        await sent.record(sentAs);
        await sent.close();
        expect(await row(deliveryId)).toMatchObject({ state: 'SENT' });
        expect(await journal().find([deliveryId])).toEqual([]);
        return store.hold(...args);
      },
    };
    const receipts = createDeliveryReceipts({
      deliveries: deliveries(),
      journal: journal(),
      early: sendWrittenFirst,
      logger: memoryLogger().logger,
    });
    applyEarly = receipts.applyEarly;
    await receipts.record({ provider: 'twilio', providerMessageId: sentAs.providerMessageId, state: 'DELIVERED' });
    expect(await row(deliveryId)).toMatchObject({ state: 'DELIVERED' });
  });

  test('when a worker died after journaling a send whose receipt came first, then the sweep writes the send and applies the receipt', async () => {
    const deliveryId = await queuedDelivery();
    const sentAs = outcome(deliveryId, new Date(Date.now() - 5000));
    const receipts = createDeliveryReceipts({
      deliveries: deliveries(),
      journal: journal(),
      early: earlyStore(),
      logger: memoryLogger().logger,
    });
    await receipts.record({ provider: 'twilio', providerMessageId: sentAs.providerMessageId, state: 'DELIVERED' });
    await journal().write(sentAs);
    const sweep = await sweepDeliveries({ ...sweepDeps(), earlyReceipts: receipts.applyEarly });
    expect(sweep).toEqual({ recovered: 1, expired: 0, requeued: 0 });
    expect(await row(deliveryId)).toMatchObject({ state: 'DELIVERED', providerMessageId: sentAs.providerMessageId });
    expect(await service.ctx.redis.exists(earlyKey(sentAs.providerMessageId))).toBe(0);
  });

  test('when Redis refuses the journal entry, then the row itself is written before the job ends', async () => {
    const deliveryId = await queuedDelivery();
    // A connection that has gone away refuses commands at once, as the fail-fast one does while Redis is down.
    const closedRedis = createProducerRedis(service.config.redis);
    expect(await waitForRedis(closedRedis)).toBe(true);
    await closedRedis.quit();
    const log = memoryLogger();
    const sent = createSentOutcomes({
      journal: createSentJournal(closedRedis, service.config.queuePrefix),
      deliveries: deliveries(),
      logger: log.logger,
      lingerMs: 60_000,
    });
    await sent.record(outcome(deliveryId));
    expect(await row(deliveryId)).toMatchObject({ state: 'SENT', providerMessageId: outcome(deliveryId).providerMessageId });
    expect(log.lines().some((line) => line.msg === 'sent outcome not journaled; writing the row directly')).toBe(true);
  });
});
