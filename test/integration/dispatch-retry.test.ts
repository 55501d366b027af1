import { loadConfig } from '../../core/platform/config/config.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries } from '../../core/deliveries/delivery-sweeper.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { requeueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson } from '../support/otp-helpers.js';
import { startServiceOnOwnRedis, type ServiceOnOwnRedis } from '../support/own-redis.js';
import { memoryLogger } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

describe('dispatch enqueue retried in the API process when Redis comes back', () => {
  let service: ServiceOnOwnRedis;
  let token: string;

  beforeAll(async () => {
    // Default sweeper timings: a minute's grace, so only the API's own retry can send within seconds.
    service = await startServiceOnOwnRedis('dispatchretry', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'fred', mobileNumber: '+15550004444' });
  });
  afterAll(async () => {
    await service.close();
  });

  const generate = async () => {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('fred'));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  };
  const states = async (otpUuids: string[]) =>
    (
      await service.ctx.mongo
        .collection('deliveries')
        .find({ refId: { $in: otpUuids } })
        .toArray()
    ).map((r) => r.state as string);

  test('when OTPs are accepted while Redis is down, then they are sent within 5 s of Redis answering again, each once', async () => {
    const worker: RunningWorker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      await service.ownRedis.stop();
      const otpUuids: string[] = [];
      for (let i = 0; i < 5; i += 1) otpUuids.push(await generate());
      expect(await states(otpUuids)).toEqual(['QUEUED', 'QUEUED', 'QUEUED', 'QUEUED', 'QUEUED']);
      expect(service.ctx.dispatch.pending()).toBe(5);

      // Timed from the moment Redis answers, before the service has reconnected.
      await service.ownRedis.restart({ waitForService: false });
      const backAt = Date.now();
      await eventually(async () => ((await states(otpUuids)).every((s) => s === 'SENT') ? true : undefined), 15000, 50);
      expect(Date.now() - backAt).toBeLessThanOrEqual(5000);
      expect(service.ctx.dispatch.pending()).toBe(0);
      expect(service.logLines().some((l) => l.msg === 'held dispatch jobs enqueued' && l.enqueued === 5)).toBe(true);
      const outbox = await service.ctx.mongo.collection('outbox').countDocuments({ otpUuid: { $in: otpUuids } });
      expect(outbox).toBe(5);
    } finally {
      await worker.shutdown();
    }
  }, 60000);

  test('when a stale row still has its job waiting, then the sweeper touches it but reports nothing requeued', async () => {
    const otpUuid = await generate();
    const id = `otp-${otpUuid}-SMS`;
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: id as never }, { $set: { updatedAt: new Date(Date.now() - 120_000) } });
    const log = memoryLogger();
    const deps = {
      deliveries: createDeliveriesRepository(service.ctx.mongo),
      journal: createSentJournal(service.ctx.redis, service.config.queuePrefix),
      enqueue: (deliveryId: string) => requeueDispatch(service.ctx.queues.dispatch, deliveryId),
      logger: log.logger,
      graceMs: 60_000,
    };
    expect(await service.ctx.queues.dispatch.getJob(id)).toBeDefined();
    expect(await sweepDeliveries(deps)).toEqual({ recovered: 0, expired: 0, requeued: 0 });
    expect(log.lines().filter((l) => l.msg === 'delivery sweep')).toEqual([]);

    // Once the job is gone, the next stale pass queues it and says so.
    await (await service.ctx.queues.dispatch.getJob(id))?.remove();
    await service.ctx.mongo
      .collection('deliveries')
      .updateOne({ _id: id as never }, { $set: { updatedAt: new Date(Date.now() - 120_000) } });
    expect(await sweepDeliveries(deps)).toEqual({ recovered: 0, expired: 0, requeued: 1 });
    expect(
      log
        .lines()
        .filter((l) => l.msg === 'delivery sweep')
        .map((l) => l.requeued),
    ).toEqual([1]);
  });
});
