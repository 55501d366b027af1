import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import type { Delivery } from '../../core/deliveries/delivery.types.js';
import { createOtpsRepository, type OtpRecord } from '../../core/otp/otps.repository.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/** Group commit against the real driver and MongoDB-wire server: batches form, items keep their own fate. */
describe('group commit on the stores', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('groupcommit', { RATE_LIMIT_OTP_PER_USER: '1000' });
  });
  afterAll(async () => {
    await service.close();
  });

  const record = (otpUuid: string): OtpRecord => ({
    otpUuid,
    enterpriseId: 'default',
    clientId: 'c1',
    userId: 'u1',
    digest: 'd',
    hashSpec: 'NONE',
    attempts: 3,
    attemptsUsed: 0,
    status: 'ACTIVE',
    expiresAt: new Date(Date.now() + 60_000),
    generateJwt: false,
    channels: ['SMS'],
    createdAt: new Date(),
  });

  test('when inserts in one batch include a duplicate id, then only that insert fails (E11000) and the others are stored', async () => {
    const otps = createOtpsRepository(service.ctx.mongo);
    await otps.insert(record('dup-1'));
    const results = await Promise.allSettled([
      otps.insert(record('fresh-1')),
      otps.insert(record('dup-1')),
      otps.insert(record('fresh-2')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 11000 });
    const stored = await service.ctx.mongo.collection('otps').countDocuments({ _id: { $in: ['fresh-1', 'fresh-2', 'dup-1'] } as never });
    expect(stored).toBe(3);
  });

  test('when delivery rows of several OTPs are inserted at once and one collides, then the other OTPs rows are all stored', async () => {
    const deliveries = createDeliveriesRepository(service.ctx.mongo);
    const row = (id: string): Delivery => ({
      id,
      kind: 'otp',
      refId: id,
      channel: 'SMS',
      to: '+15550001234',
      template: 'otp_sms',
      macros: {},
      state: 'QUEUED',
      attempts: 0,
      notAfter: new Date(Date.now() + 60_000),
      queuedAt: new Date(),
      updatedAt: new Date(),
    });
    await deliveries.insertNew([row('row-taken')]);
    const results = await Promise.allSettled([
      deliveries.insertNew([row('row-a1'), row('row-a2')]),
      deliveries.insertNew([row('row-b1'), row('row-taken')]),
      deliveries.insertNew([row('row-c1')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const ids = (
      await service.ctx.mongo
        .collection('deliveries')
        .find({}, { projection: { _id: 1 } })
        .toArray()
    )
      .map((d) => String(d._id))
      .sort();
    expect(ids).toEqual(expect.arrayContaining(['row-a1', 'row-a2', 'row-c1']));
  });

  test('when many look-ups run at once, then each caller gets its own user, or undefined', async () => {
    for (let i = 0; i < 5; i++) await insertUser(service.ctx.mongo, { userId: `gc-user-${i}`, mobileNumber: `+1555000900${i}` });
    const users = createUsersRepository(service.ctx.mongo);
    const ids = ['gc-user-3', 'nobody', 'gc-user-0', 'gc-user-3', 'gc-user-4'];
    const found = await Promise.all(ids.map((userId) => users.findUser({ enterpriseId: 'default', userId })));
    expect(found.map((u) => u?.userId)).toEqual(['gc-user-3', undefined, 'gc-user-0', 'gc-user-3', 'gc-user-4']);
    expect(found[2]?.mobileNumber).toBe('+15550009000');
  });

  test('when 30 OTP requests arrive at once, then each gets its own OTP, delivery row and sealed job', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
    await insertUser(service.ctx.mongo, { userId: 'burst', mobileNumber: '+15550008888' });
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => postJson(`${service.url}/v1/svc-otp`, accessToken, otpBody('burst'))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill(200));
    const uuids = await Promise.all(answers.map(async (r) => ((await r.json()) as { otpUuid: string }).otpUuid));
    expect(new Set(uuids).size).toBe(30);
    expect(await service.ctx.mongo.collection('deliveries').countDocuments({ refId: { $in: uuids } })).toBe(30);
    const jobs = await Promise.all(uuids.map((u) => service.ctx.queues.dispatch.getJob(`otp-${u}-SMS`)));
    expect(jobs.every((job) => typeof (job?.data as { sealed?: unknown } | undefined)?.sealed === 'string')).toBe(true);
  });
});
