import { loadConfig } from '../../core/platform/config/config.js';
import { businessRegistry } from '../../core/platform/metrics/business-metrics.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';
import { authorizeUrl, registerTestApp } from '../support/oauth-flow-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';

// Numbers libphonenumber places in a country (the test suite's +1 555 numbers are in none).
const US_NUMBER = '+12025550143';
const CA_NUMBER = '+16135550143';
const JM_NUMBER = '+18765550143';
const OLD_US_NUMBER = '+12025550199';

describe('SMS_ALLOWED_COUNTRIES: SMS goes only to the countries a deployment serves (SMS pumping)', () => {
  let service: TestService;
  let twilio: ProviderStub;
  let worker: RunningWorker;
  let token: string;
  let clientId: string;

  beforeAll(async () => {
    twilio = await startProviderStub([{ status: 201, body: { sid: 'SM33333333333333333333333333333333', status: 'queued' } }]);
    service = await startTestService(
      'smscountries',
      {
        SMS_ALLOWED_COUNTRIES: 'US,CA',
        TWILIO_ACCOUNT_SID: `AC${'ab'.repeat(16)}`,
        TWILIO_AUTH_TOKEN: 'sms-countries-token',
        TWILIO_FROM: '+15005550006',
        TWILIO_API_BASE_URL: twilio.url,
      },
      // The sign-in's redirects name the service's own address.
      { ownPublicUrl: true },
    );
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    ({ accessToken: token, clientId } = await createClientWithToken(service, { scopes: ['users', 'otp'] }));
    await createGroups(service, ['retail']);
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
    await twilio.close();
  });

  const enroll = (userId: string, mobileNumber: string) =>
    sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { mobileNumber }));
  const deliveriesOf = (otpUuid: string) =>
    eventually(async () => {
      const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
      const rows = ((await res.json()) as { deliveries: { channel: string; state: string; lastError?: string }[] }).deliveries;
      return rows.length > 0 && rows.every((d) => d.state !== 'QUEUED') ? rows : undefined;
    });

  test('when a user is enrolled with a number of another country, or of none, then 422 names the field and why; a number of a listed country is enrolled', async () => {
    const jamaica = await enroll('in-jamaica', JM_NUMBER);
    expect(jamaica.status).toBe(422);
    expect(await jamaica.json()).toMatchObject({
      error: 'Invalid data.',
      message: '[Invalid field mobileNumber]',
      reason: 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)',
    });
    const nowhere = await enroll('nowhere', '+15550100143');
    expect(nowhere.status).toBe(422);
    expect(await nowhere.json()).toMatchObject({
      message: '[Invalid field mobileNumber]',
      reason: 'SMS goes only to the countries in SMS_ALLOWED_COUNTRIES, and no country has this number',
    });
    // Without the '+', the number is read the same way.
    expect((await enroll('in-jamaica', JM_NUMBER.slice(1))).status).toBe(422);
    expect((await enroll('in-us', US_NUMBER)).status).toBe(201);
    expect(await service.ctx.mongo.collection('users').countDocuments({ userId: { $in: ['in-jamaica', 'nowhere'] } })).toBe(0);
    // The operator learns who gives such numbers, and never the number.
    const warned = service.logLines().filter((line) => String(line.msg).startsWith('mobile number refused'));
    expect(warned[0]).toMatchObject({ level: 40, clientId, enterpriseId: 'default', country: 'JM' });
    expect(warned.map((line) => line.country)).toEqual(['JM', 'unknown', 'JM']);
    expect(JSON.stringify(warned)).not.toContain('5550143');
  });

  test('when a user is moved to a number of another country, then PATCH is 422 and the number stays; a listed country is taken', async () => {
    expect((await enroll('mover', US_NUMBER.replace('43', '44'))).status).toBe(201);
    const refused = await sendJson(`${service.url}/v1/users/mover`, 'PATCH', token, { mobileNumber: JM_NUMBER });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ reason: 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)' });
    const moved = await sendJson(`${service.url}/v1/users/mover`, 'PATCH', token, { mobileNumber: CA_NUMBER });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ mobileNumber: CA_NUMBER });
  });

  test('when a user stored before the list has a number of another country and the OTP asks for SMS alone, then 422 at once with the reason, nothing stored and Twilio never asked; a listed one is sent', async () => {
    await insertUser(service.ctx.mongo, { userId: 'old-jamaica', mobileNumber: JM_NUMBER });
    await insertUser(service.ctx.mongo, { userId: 'old-us', mobileNumber: OLD_US_NUMBER });
    const before = twilio.requests.length;

    const refused = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('old-jamaica'));
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({
      status: 422,
      error: 'Invalid data.',
      message: "dispatchOptions.SMS: the user's mobileNumber is outside the countries SMS goes to",
      reason: 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)',
      path: '/v1/svc-otp',
    });
    expect(await service.ctx.mongo.collection('otps').countDocuments({ userId: 'old-jamaica' })).toBe(0);
    // The operator learns which client asks for such numbers, and never the number.
    const warned = service.logLines().filter((line) => String(line.msg).startsWith('OTP refused: SMS may not go'));
    expect(warned).toEqual([expect.objectContaining({ level: 40, clientId, enterpriseId: 'default', country: 'JM' })]);
    expect(JSON.stringify(warned)).not.toContain('5550143');

    const sent = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('old-us'));
    const sentUuid = ((await sent.json()) as { otpUuid: string }).otpUuid;
    expect(await deliveriesOf(sentUuid)).toEqual([expect.objectContaining({ state: 'SENT' })]);
    const asked = twilio.requests.slice(before).map((r) => new URLSearchParams(r.body).get('To'));
    expect(asked).toEqual([OLD_US_NUMBER]);
  });

  test('when such an OTP also asks for e-mail, then it is accepted: the SMS ends FAILED with the reason, without Twilio, and the e-mail is sent', async () => {
    await insertUser(service.ctx.mongo, {
      userId: 'old-jamaica-both',
      mobileNumber: JM_NUMBER.replace('43', '45'),
      emailId: 'both@example.com',
    });
    const before = twilio.requests.length;
    const res = await postJson(
      `${service.url}/v1/svc-otp`,
      token,
      otpBody('old-jamaica-both', { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } }),
    );
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    expect((await outboxMessageFor(service, 'both@example.com', otpUuid)).text).toMatch(/\d{6}/);
    expect(await deliveriesOf(otpUuid)).toContainEqual(
      expect.objectContaining({ channel: 'SMS', state: 'FAILED', lastError: 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)' }),
    );
    expect(twilio.requests.length).toBe(before);
  });

  test('when such an OTP named a fallback channel, then the code goes there instead', async () => {
    await insertUser(service.ctx.mongo, {
      userId: 'old-jamaica-mail',
      mobileNumber: JM_NUMBER.replace('43', '44'),
      emailId: 'jm@example.com',
    });
    const res = await postJson(
      `${service.url}/v1/svc-otp`,
      token,
      otpBody('old-jamaica-mail', { fallbackDispatchOptions: { EMAIL: 'otp_email' } }),
    );
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const mail = await outboxMessageFor(service, 'jm@example.com', otpUuid);
    expect(mail.text).toMatch(/\d{6}/);
  });

  test('when a user whose stored number SMS may not go to signs in, then the login code goes to the e-mail address instead', async () => {
    await insertUser(service.ctx.mongo, {
      userId: 'old-jamaica-signin',
      mobileNumber: JM_NUMBER.replace('43', '46'),
      emailId: 'jm-signin@example.com',
    });
    const app = await registerTestApp(service, { name: 'sms countries app' });
    const before = twilio.requests.length;
    const callback = await signInWithForms(
      service,
      new FormWalker(service.url),
      authorizeUrl(service, app),
      'old-jamaica-signin',
      'jm-signin@example.com',
    );
    expect(new URL(callback).searchParams.get('code')).toEqual(expect.any(String));
    expect(twilio.requests.length).toBe(before);
  });

  test('when numbers are refused, then svc_sms_country_refusals_total counts them by country and where (given at the API, asked for an OTP, met at send time)', async () => {
    const counted = await businessRegistry.getSingleMetric('svc_sms_country_refusals_total')?.get();
    const count = (country: string, where: string) =>
      counted?.values.find((v) => v.labels.country === country && v.labels.where === where)?.value ?? 0;
    expect(count('JM', 'given')).toBeGreaterThanOrEqual(3);
    expect(count('unknown', 'given')).toBeGreaterThanOrEqual(1);
    expect(count('JM', 'send')).toBeGreaterThanOrEqual(2);
    expect(count('JM', 'asked')).toBeGreaterThanOrEqual(1);
  });

  test('when the setting is not a list of country codes, then the configuration names it and what is wrong', () => {
    expect(() => loadConfig({ ...service.env, SMS_ALLOWED_COUNTRIES: 'US,XX,gb' })).toThrow(
      'SMS_ALLOWED_COUNTRIES: must be a comma-separated list of ISO 3166-1 alpha-2 country codes in capitals (e.g. US,CA,GB); not valid: XX, gb',
    );
  });
});
