import { randomBytes } from 'node:crypto';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { otpResendDeliveryId } from '../../core/deliveries/delivery.types.js';
import { resendCodeContext } from '../../core/otp/otp-resend.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody } from '../support/users-helpers.js';

/**
 * An OTP keeps a sealed copy of its code for resends (sealed with OTP_ENCRYPTION_KEY). These tests
 * leave a copy that only a key no longer configured opens (what dropping a key before
 * `npm run reseal` leaves) and resend. No dispatch worker runs: whatever a resend queued stays
 * visible as rows.
 */
describe('resending an OTP whose kept code opens with no configured key', () => {
  let service: TestService;
  let token: string;
  beforeAll(async () => {
    service = await startTestService('otpresendlost', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const otps = () => service.ctx.mongo.collection('otps');
  const deliveries = () => service.ctx.mongo.collection('deliveries');
  const resend = (otpUuid: string, headers: Record<string, string> = {}) =>
    fetch(`${service.url}/v1/svc-otp/${otpUuid}/resend`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers } });

  async function otpWithLostResendCode(userId: string, mobile: string): Promise<string> {
    await insertUser(service.ctx.mongo, { userId, mobileNumber: mobile });
    const first = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));
    expect(first.status).toBe(200);
    const { otpUuid } = (await first.json()) as { otpUuid: string };
    const sealed = encryptSecret('424242', randomBytes(32), resendCodeContext(otpUuid));
    await otps().updateOne({ _id: otpUuid as never }, { $set: { resendCode: sealed } });
    return otpUuid;
  }

  test('when its code no longer opens, then a resend is 409 saying so, records no resend, uses no limit and logs the OTP but not its code', async () => {
    const mobile = '+15550008101';
    const otpUuid = await otpWithLostResendCode('resendlost', mobile);
    const linesBefore = service.logLines().length;
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await resend(otpUuid);
      expect(res.status).toBe(409);
      // The OTP's state, as every 409 of a resend says it: still ACTIVE, validation still works.
      expect(await res.json()).toEqual(
        errorBody(409, 'Conflict', 'OTP cannot be resent: its code is no longer kept', `/v1/svc-otp/${otpUuid}/resend`, {
          otpUuid,
          status: 'ACTIVE',
        }),
      );
    }
    const record = await otps().findOne({ _id: otpUuid as never });
    expect(record?.resends ?? []).toEqual([]);
    // Refused before its budgets were taken: the user's budget shows only the two OTPs generated.
    const next = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('resendlost'));
    expect(next.headers.get('ratelimit')).toMatch(/"otp-per-user";r=998;/);
    expect(await deliveries().countDocuments({ refId: otpUuid })).toBe(1);
    const lines = service.logLines().slice(linesBefore);
    expect(lines.filter((line) => line.msg === 'OTP resend code opens with no configured key')).toEqual([
      expect.objectContaining({ otpUuid }),
      expect.objectContaining({ otpUuid }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(mobile);
  });

  test('when a keyed resend was done and its code was lost since, then a retry with the key answers it was done and writes nothing new', async () => {
    await insertUser(service.ctx.mongo, { userId: 'resendlostkeyed', mobileNumber: '+15550008102' });
    const generated = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('resendlostkeyed'));
    const { otpUuid } = (await generated.json()) as { otpUuid: string };
    const first = await resend(otpUuid, { 'Idempotency-Key': 'resend-then-lost' });
    expect(first.status).toBe(200);
    const rowsAfterFirst = await deliveries().find({ refId: otpUuid }).project({ _id: 1 }).toArray();
    expect(rowsAfterFirst).toHaveLength(2);
    await otps().updateOne(
      { _id: otpUuid as never },
      { $set: { resendCode: encryptSecret('515151', randomBytes(32), resendCodeContext(otpUuid)) } },
    );

    const retry = await resend(otpUuid, { 'Idempotency-Key': 'resend-then-lost' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await deliveries().find({ refId: otpUuid }).project({ _id: 1 }).toArray()).toEqual(rowsAfterFirst);
    const record = await otps().findOne({ _id: otpUuid as never });
    expect(record?.resends).toHaveLength(1);
    expect(rowsAfterFirst.map((row) => String(row._id))).toContain(otpResendDeliveryId(otpUuid, 'SMS', String(record?.resends[0])));
  });
});
