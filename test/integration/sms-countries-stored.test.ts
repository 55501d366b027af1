import { businessRegistry } from '../../core/platform/metrics/business-metrics.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, userBody } from '../support/users-helpers.js';

// Numbers libphonenumber places in a country: Jamaica is outside the list, the US inside.
const JM_NUMBER = '+18765550143';
const REASON = 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)';

const refusalsCounted = async (country: string, where: string) =>
  (await businessRegistry.getSingleMetric('svc_sms_country_refusals_total')?.get())?.values.find(
    (v) => v.labels.country === country && v.labels.where === where,
  )?.value ?? 0;

/**
 * What was made before SMS_ALLOWED_COUNTRIES was set (an OTP, a pending activation) and is asked
 * for again once it is: two services on the same stores, the deployment before and after.
 */
describe('SMS_ALLOWED_COUNTRIES set after the fact: a resend or re-issue that could only go by SMS to a number outside it', () => {
  let before: TestService;
  let after: TestService;
  let token: string;
  let clientId: string;

  beforeAll(async () => {
    const limits = { RATE_LIMIT_OTP_PER_USER: '3', RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600' };
    before = await startTestService('smsstored', limits);
    after = await startTestService('smsstored', { ...before.env, SMS_ALLOWED_COUNTRIES: 'US,CA' });
    ({ accessToken: token, clientId } = await createClientWithToken(before, { scopes: ['users', 'otp'] }));
    await createGroups(before, ['retail']);
  });
  afterAll(async () => {
    await after.close();
    await before.close();
  });

  const resend = (otpUuid: string) =>
    fetch(`${after.url}/v1/svc-otp/${otpUuid}/resend`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  async function generatedBefore(userId: string, overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await postJson(`${before.url}/v1/svc-otp`, token, otpBody(userId, overrides));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  describe('POST /v1/svc-otp/{otpUuid}/resend', () => {
    test('when the OTP goes by SMS alone to a number outside the list, then 422 at once with the reason, no budget taken, no resend recorded and nothing written', async () => {
      await insertUser(before.ctx.mongo, { userId: 'resend-jm', mobileNumber: JM_NUMBER, emailId: 'resend-jm@example.com' });
      const otpUuid = await generatedBefore('resend-jm');
      const counted = await refusalsCounted('JM', 'asked');

      const res = await resend(otpUuid);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        errorBody(
          422,
          'Invalid data.',
          "OTP cannot be resent: the user's mobileNumber is outside the countries SMS goes to",
          `/v1/svc-otp/${otpUuid}/resend`,
          { reason: REASON },
        ),
      );
      expect(res.headers.get('ratelimit')).toBeNull();
      const otp = await after.ctx.mongo.collection('otps').findOne({ _id: otpUuid as never });
      expect(otp?.resends ?? []).toEqual([]);
      expect(await after.ctx.mongo.collection('deliveries').countDocuments({ refId: otpUuid })).toBe(1);
      // One point of three taken by the first OTP, one by this one: the refused resend took none.
      const next = await postJson(`${after.url}/v1/svc-otp`, token, otpBody('resend-jm', { dispatchOptions: { EMAIL: 'otp_email' } }));
      expect(next.status).toBe(200);
      expect(next.headers.get('ratelimit')).toMatch(/"otp-per-user";r=1;/);
      expect(await refusalsCounted('JM', 'asked')).toBe(counted + 1);
      // The operator learns which OTP and country, never the number.
      const warned = after.logLines().filter((line) => String(line.msg).startsWith('OTP resend refused: SMS may not go'));
      expect(warned).toEqual([expect.objectContaining({ level: 40, otpUuid, clientId, enterpriseId: 'default', country: 'JM' })]);
      expect(JSON.stringify(after.logLines())).not.toContain('5550143');
    });

    test('when the OTP also goes by e-mail, or falls back to it, then the resend is accepted and written for its channels', async () => {
      // A user each: the per-user budget of this file is three.
      await insertUser(before.ctx.mongo, {
        userId: 'resend-jm-both',
        mobileNumber: JM_NUMBER.replace('43', '44'),
        emailId: 'both@example.com',
      });
      await insertUser(before.ctx.mongo, {
        userId: 'resend-jm-fb',
        mobileNumber: JM_NUMBER.replace('43', '45'),
        emailId: 'fb@example.com',
      });
      const both = await generatedBefore('resend-jm-both', { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } });
      const withFallback = await generatedBefore('resend-jm-fb', { fallbackDispatchOptions: { EMAIL: 'otp_email' } });

      expect((await resend(both)).status).toBe(200);
      expect((await resend(withFallback)).status).toBe(200);
      // Each first message written again: two plus two, one plus one.
      const rows = after.ctx.mongo.collection('deliveries');
      expect(await rows.countDocuments({ refId: both })).toBe(4);
      expect(await rows.countDocuments({ refId: withFallback })).toBe(2);
    });
  });

  describe('POST /admin/users/{userId}/activation', () => {
    const reissue = (userId: string) =>
      fetch(`${after.url}/admin/users/${userId}/activation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${after.config.adminToken}` },
      });
    async function enrolledBefore(userId: string, fields: Record<string, unknown>): Promise<void> {
      const res = await sendJson(`${before.url}/v1/users`, 'POST', token, { ...userBody(userId), emailId: undefined, ...fields });
      expect(res.status).toBe(201);
    }
    const activationOf = async (userId: string) =>
      (await after.ctx.mongo.collection('users').findOne({ userId }))?.activation as { issue: number } | undefined;

    test('when the activation could only go by SMS to a number outside the list, then 422 names the field and why, as enrollment does, and no new code is stored', async () => {
      await enrolledBefore('reissue-jm', { mobileNumber: JM_NUMBER.replace('43', '46') });
      const counted = await refusalsCounted('JM', 'asked');

      const res = await reissue('reissue-jm');
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        errorBody(422, 'Invalid data.', '[Invalid field mobileNumber]', '/admin/users/reissue-jm/activation', { reason: REASON }),
      );
      // The pending activation is the enrollment's, untouched: no code that could never arrive.
      expect(await activationOf('reissue-jm')).toMatchObject({ issue: 1 });
      expect(await after.ctx.mongo.collection('deliveries').countDocuments({ refId: 'reissue-jm' })).toBe(0);
      expect(await refusalsCounted('JM', 'asked')).toBe(counted + 1);
      const warned = after.logLines().filter((line) => String(line.msg).startsWith('activation re-issue refused: SMS may not go'));
      expect(warned).toEqual([expect.objectContaining({ level: 40, userId: 'reissue-jm', enterpriseId: 'default', country: 'JM' })]);
      expect(JSON.stringify(after.logLines())).not.toContain('5550146');
    });

    test('when the user also has an e-mail address, then the re-issue is accepted: the code can arrive by e-mail', async () => {
      await enrolledBefore('reissue-jm-mail', { mobileNumber: JM_NUMBER.replace('43', '47'), emailId: 'reissue-jm@example.com' });
      const res = await reissue('reissue-jm-mail');
      expect(res.status).toBe(202);
      expect(await activationOf('reissue-jm-mail')).toMatchObject({ issue: 2 });
    });
  });
});
