import { randomBytes } from 'node:crypto';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { otpDeliveryId } from '../../core/deliveries/delivery.types.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const stamp = expect.stringMatching(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);

/**
 * A keyed OTP request parks its code on the OTP record (sealed with OTP_ENCRYPTION_KEY) until its
 * delivery rows exist, so a retry can resume it. These tests leave a parked code that only a key
 * no longer configured opens (what dropping a key before `npm run reseal` leaves) and retry. No
 * dispatch worker runs: whatever a retry queued stays visible as rows and jobs.
 */
describe('a keyed OTP retry whose parked code opens with no configured key', () => {
  let service: TestService;
  let token: string;
  beforeAll(async () => {
    service = await startTestService('otpparkedlost', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const generate = (userId: string, key: string) =>
    postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId), { 'Idempotency-Key': key });
  const otps = () => service.ctx.mongo.collection('otps');
  const deliveries = () => service.ctx.mongo.collection('deliveries');

  /** What a key dropped before a reseal leaves on the record: a code only that key opened. */
  async function sealParkedCodeWithLostKey(otpUuid: string, code: string): Promise<string> {
    const sealed = encryptSecret(code, randomBytes(32), otpUuid);
    await otps().updateOne({ _id: otpUuid as never }, { $set: { codeEncrypted: sealed } });
    return sealed;
  }

  test('when the first request failed before its rows were written, then every retry is 409 telling to use a new key, nothing is queued, and the log names the OTP but not its code', async () => {
    const mobile = '+15550008001';
    await insertUser(service.ctx.mongo, { userId: 'parkedlost', mobileNumber: mobile });
    // The store refuses this number's row (a unique index a blocker row holds): the first request
    // fails after parking its code, before its commit point.
    await deliveries().createIndex({ to: 1 }, { unique: true, name: 'one-row-per-number-for-this-test' });
    try {
      await deliveries().insertOne({ _id: 'blocker' as never, to: mobile });
      expect((await generate('parkedlost', 'lost-before-rows')).status).toBe(500);
    } finally {
      await deliveries().deleteOne({ _id: 'blocker' as never });
      await deliveries().dropIndex('one-row-per-number-for-this-test');
    }
    const parked = await otps().findOne({ userId: 'parkedlost' });
    expect(typeof parked?.codeEncrypted).toBe('string');
    const otpUuid = String(parked?._id);
    const sealed = await sealParkedCodeWithLostKey(otpUuid, '424242');
    const linesBefore = service.logLines().length;

    for (let attempt = 0; attempt < 2; attempt++) {
      const retry = await generate('parkedlost', 'lost-before-rows');
      expect(retry.status).toBe(409);
      // Refused once its budgets were taken (and given back): it says where they stand, as a 200 does.
      expect(retry.headers.get('ratelimit-policy')).toContain('"otp-per-user";q=1000;w=600');
      expect(await retry.json()).toEqual({
        timestamp: stamp,
        status: 409,
        error: 'Conflict',
        message:
          'The request with this Idempotency-Key did not finish and its code is no longer kept: send a new request with a new Idempotency-Key',
        path: '/v1/svc-otp',
      });
    }
    expect(await deliveries().countDocuments({ refId: otpUuid })).toBe(0);
    expect(await service.ctx.queues.dispatch.getJob(otpDeliveryId(otpUuid, 'SMS'))).toBeUndefined();
    // Left parked: every retry with the key gets the same answer, never a 200 for a code never sent.
    expect((await otps().findOne({ _id: otpUuid as never }))?.codeEncrypted).toBe(sealed);
    const retryLines = service.logLines().slice(linesBefore);
    const warnings = retryLines.filter((line) => line.msg === 'parked OTP code opens with no configured key');
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toMatchObject({ otpUuid, rowsWritten: false });
    const logged = JSON.stringify(retryLines);
    expect(logged).not.toContain(sealed);
    expect(logged).not.toContain(mobile);

    // The advice works: a new key is a new OTP.
    expect((await generate('parkedlost', 'lost-before-rows-new-key')).status).toBe(200);
  });

  test('when the first request wrote its rows but its parked code stayed, then a retry answers its otpUuid, clears the code and writes no other row', async () => {
    await insertUser(service.ctx.mongo, { userId: 'parkedcommitted', mobileNumber: '+15550008002' });
    const first = await generate('parkedcommitted', 'lost-after-rows');
    expect(first.status).toBe(200);
    const { otpUuid } = (await first.json()) as { otpUuid: string };
    // As if clearing the parked code had failed after the rows were written, and its key was dropped since.
    await sealParkedCodeWithLostKey(otpUuid, '515151');

    const retry = await generate('parkedcommitted', 'lost-after-rows');
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ otpUuid });
    expect((await otps().findOne({ _id: otpUuid as never }))?.codeEncrypted).toBeUndefined();
    expect(await deliveries().countDocuments({ refId: otpUuid })).toBe(1);
    const again = await generate('parkedcommitted', 'lost-after-rows');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual({ otpUuid });
  });
});
