import { loadConfig } from '../../core/platform/config/config.js';
import { businessRegistry } from '../../core/platform/metrics/business-metrics.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { adminRequest } from '../support/admin-requests.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson, readOutbox } from '../support/otp-helpers.js';
import { metricSample } from '../support/metrics-text.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

// libphonenumber places it in Jamaica, outside the list below.
const JM_NUMBER = '+18765550143';
const REASON = 'SMS to JM numbers is not allowed (SMS_ALLOWED_COUNTRIES)';
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

/** Provider calls the dispatch worker (in this process) timed for SMS, by outcome. */
const smsProviderCalls = async () =>
  Object.fromEntries(
    ((await businessRegistry.getSingleMetric('svc_provider_send_duration_seconds')?.get())?.values ?? [])
      .filter((v) => (v as { metricName?: string }).metricName === 'svc_provider_send_duration_seconds_count' && v.labels.channel === 'SMS')
      .map((v) => [`${v.labels.provider} ${v.labels.outcome}`, v.value]),
  );

interface StatusRow {
  channel: string;
  state: string;
  provider?: string;
}
interface AdminRow {
  refId: string;
  channel: string;
  provider?: string;
}

/**
 * A message the country policy refuses never reaches a provider: its delivery row must not name
 * one (an operator reading it, or filtering failures by provider, would blame an account that
 * never saw the message). The policy wraps whichever SMS provider is configured, so both.
 */
describe.each([
  { deployment: 'without Twilio (SMS goes to the outbox)', twilio: false },
  { deployment: 'with Twilio', twilio: true },
])('SMS_ALLOWED_COUNTRIES, $deployment: an SMS refused at send time', ({ twilio }) => {
  let service: TestService;
  let stub: ProviderStub | undefined;
  let worker: RunningWorker;
  let token: string;

  beforeAll(async () => {
    stub = twilio ? await startProviderStub([{ status: 201, body: { sid: `SM${'4'.repeat(32)}`, status: 'queued' } }]) : undefined;
    const twilioEnv: Record<string, string> = stub
      ? {
          TWILIO_ACCOUNT_SID: `AC${'ef'.repeat(16)}`,
          TWILIO_AUTH_TOKEN: 'country-rows-token',
          TWILIO_FROM: '+15005550006',
          TWILIO_API_BASE_URL: stub.url,
        }
      : {};
    service = await startTestService(twilio ? 'smsrowstwilio' : 'smsrowsoutbox', { SMS_ALLOWED_COUNTRIES: 'US,CA', ...twilioEnv });
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    ({ accessToken: token } = await createClientWithToken(service, { scopes: ['otp'] }));
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
    await stub?.close();
  });

  // A user stored before the list was set, asked for SMS and e-mail: the OTP's own check lets it
  // through (the code can arrive by e-mail), so the SMS meets the policy at send time.
  const generateForBoth = async (userId: string, mobileNumber = JM_NUMBER) => {
    await insertUser(service.ctx.mongo, { userId, mobileNumber, emailId: `${userId}@example.com` });
    const res = await postJson(
      `${service.url}/v1/svc-otp`,
      token,
      otpBody(userId, { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } }),
    );
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    await outboxMessageFor(service, `${userId}@example.com`, otpUuid);
    return otpUuid;
  };
  const smsRowOf = (otpUuid: string) =>
    eventually(async () => {
      const status = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
      const rows = ((await status.json()) as { deliveries: StatusRow[] }).deliveries;
      return rows.find((d) => d.channel === 'SMS' && d.state === 'FAILED');
    });

  test('when it ends FAILED, then neither the OTP status nor the operators list names a provider, and no provider filter finds it', async () => {
    const otpUuid = await generateForBoth('jm-both');
    const sms = await smsRowOf(otpUuid);
    expect(sms).toEqual({ channel: 'SMS', state: 'FAILED', lastError: REASON, updatedAt: ISO });

    const listed = await adminRequest(service, 'GET', '/admin/deliveries?channel=SMS');
    expect(listed.status).toBe(200);
    const failed = ((await listed.json()) as { deliveries: AdminRow[] }).deliveries.filter((d) => d.refId === otpUuid);
    expect(failed).toEqual([expect.objectContaining({ channel: 'SMS', state: 'FAILED', lastError: REASON })]);
    expect(failed[0]).not.toHaveProperty('provider');
    for (const provider of ['outbox', 'twilio']) {
      const filtered = await adminRequest(service, 'GET', `/admin/deliveries?channel=SMS&provider=${provider}`);
      expect(((await filtered.json()) as { deliveries: AdminRow[] }).deliveries.map((d) => d.refId)).not.toContain(otpUuid);
    }
    // And indeed no provider got it.
    expect(await readOutbox(service, JM_NUMBER)).toEqual([]);
    expect(stub?.requests ?? []).toEqual([]);
  });

  test('when it ends FAILED, then /metrics counts it in svc_deliveries_total under provider="none", never under the SMS account', async () => {
    const account = twilio ? 'twilio' : 'outbox';
    const failed = (provider: string) => `svc_deliveries_total{channel="SMS",provider="${provider}",state="FAILED"}`;
    const scrape = async () => (await fetch(`${service.url}/metrics`)).text();
    const counts = (text: string) => ({ none: metricSample(text, failed('none')), [account]: metricSample(text, failed(account)) });
    const before = counts(await scrape());
    await smsRowOf(await generateForBoth('jm-counted', JM_NUMBER.replace('43', '45')));
    // The worker counts right after it writes the row: wait for the count, under whichever label.
    const after = await eventually(async () => {
      const now = counts(await scrape());
      return now.none + now[account] > before.none + before[account] ? now : undefined;
    });
    expect(after).toEqual({ none: before.none + 1, [account]: before[account] });
  });

  test('when it ends FAILED, then no provider call is timed: the provider error-ratio alert does not blame an account for numbers it never saw', async () => {
    const before = await smsProviderCalls();
    await smsRowOf(await generateForBoth('jm-timed', JM_NUMBER.replace('43', '44')));
    expect(await smsProviderCalls()).toEqual(before);
  });
});
