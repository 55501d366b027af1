import { REQUEST_NOT_ANSWERED } from '../../core/deliveries/deliveries.repository.js';
import { loadConfig } from '../../core/platform/config/config.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson, readOutbox } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * A fresh OTP (no Idempotency-Key) has its record and its delivery rows written at once. These
 * tests make one of the two fail on the real store and check that no code goes out for a request
 * answered with an error.
 */
describe('a fresh OTP written with its delivery rows at once', () => {
  let service: TestService;
  let token: string;
  beforeAll(async () => {
    service = await startTestService('otpfreshwrite', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const rowsTo = (to: string) => service.ctx.mongo.collection('deliveries').find({ to }).toArray();

  test('when the OTP record cannot be stored but its rows can, then the request fails and its rows end unsent, without their code', async () => {
    // The store itself refuses the record: a unique index this user's record collides with.
    const otps = service.ctx.mongo.collection('otps');
    await otps.createIndex({ userId: 1 }, { unique: true, name: 'one-otp-per-user-for-this-test' });
    try {
      await otps.insertOne({ _id: 'blocker' as never, userId: 'recordrefused' });
      await insertUser(service.ctx.mongo, { userId: 'recordrefused', mobileNumber: '+15550007001' });

      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('recordrefused'));

      expect(res.status).toBe(500);
      const rows = await rowsTo('+15550007001');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ state: 'FAILED', lastError: REQUEST_NOT_ANSWERED });
      expect(rows[0]).not.toHaveProperty('secretMacros');
      expect(await service.ctx.queues.dispatch.getJob(rows[0]?._id as unknown as string)).toBeUndefined();
    } finally {
      await otps.dropIndex('one-otp-per-user-for-this-test');
      await otps.deleteOne({ _id: 'blocker' as never });
    }
  });

  test('when a queued row has no OTP record, then the dispatch worker ends it unsent instead of sending its code', async () => {
    await insertUser(service.ctx.mongo, { userId: 'recordmissing', mobileNumber: '+15550007002' });
    await insertUser(service.ctx.mongo, { userId: 'recordkept', mobileNumber: '+15550007003' });
    // Accepted with no worker running, so both jobs wait; then one record is taken away, as if
    // its write had failed together with the ending of its rows.
    const missing = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('recordmissing'));
    const kept = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('recordkept'));
    expect([missing.status, kept.status]).toEqual([200, 200]);
    const { otpUuid } = (await missing.json()) as { otpUuid: string };
    await service.ctx.mongo.collection('otps').deleteOne({ _id: otpUuid as never });

    const worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    try {
      await eventually(async () => ((await readOutbox(service, '+15550007003')).length === 1 ? true : undefined));
      const [row] = await eventually(async () => {
        const rows = await rowsTo('+15550007002');
        return rows[0]?.state === 'FAILED' ? rows : undefined;
      });
      expect(row).toMatchObject({ state: 'FAILED', lastError: REQUEST_NOT_ANSWERED });
      expect(row).not.toHaveProperty('secretMacros');
      expect(row).not.toHaveProperty('provider');
      expect(await readOutbox(service, '+15550007002')).toEqual([]);
    } finally {
      await worker.shutdown();
    }
  });
});
