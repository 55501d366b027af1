import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/platform/config/config.js';
import { businessRegistry } from '../../core/platform/metrics/business-metrics.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub, type ScriptedAnswer } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { postTwilioStatus } from '../support/twilio-receipts.js';
import { insertUser } from '../support/user-fixtures.js';

const PRIMARY = { sid: `AC${'a1'.repeat(16)}`, token: 'failover-primary-token' };
const SECONDARY = { sid: `AC${'b2'.repeat(16)}`, token: 'failover-secondary-token' };

/** Both accounts as the API sees them (it verifies each one's receipts); the worker points them at stubs. */
const accountsEnv = (primaryUrl: string, secondaryUrl: string) => ({
  TWILIO_ACCOUNT_SID: PRIMARY.sid,
  TWILIO_AUTH_TOKEN: PRIMARY.token,
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: primaryUrl,
  TWILIO_SECONDARY_ACCOUNT_SID: SECONDARY.sid,
  TWILIO_SECONDARY_AUTH_TOKEN: SECONDARY.token,
  TWILIO_SECONDARY_FROM: '+15005550007',
  TWILIO_SECONDARY_API_BASE_URL: secondaryUrl,
});

/** Twilio's answer to an accepted message, with a sid of its own so receipts match one row. */
const accepted = (): ScriptedAnswer => ({ status: 201, body: { sid: `SM${randomBytes(16).toString('hex')}`, status: 'queued' } });
const serverError: ScriptedAnswer = { status: 500, body: { code: 20500, message: 'Internal Server Error', status: 500 } };

interface DeliveryView {
  channel: string;
  state: string;
  failover?: number;
  provider?: string;
  providerMessageId?: string;
  lastError?: string;
}

describe('failover of OTP messages: the other SMS account, the fallback channel, and the breakers', () => {
  let service: TestService;
  let token: string;
  let worker: RunningWorker | undefined;
  const stubs: ProviderStub[] = [];
  const mobile = '+15550007777';
  const email = 'carol@example.com';

  beforeAll(async () => {
    service = await startTestService('failover', {
      RATE_LIMIT_OTP_PER_USER: '1000',
      ...accountsEnv('http://127.0.0.1:1', 'http://127.0.0.1:1'),
    });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'carol', mobileNumber: mobile, emailId: email });
  });
  afterEach(async () => {
    await worker?.shutdown();
    worker = undefined;
    for (const stub of stubs.splice(0)) await stub.close();
  });
  afterAll(async () => {
    await service.close();
  });

  async function stub(script: ScriptedAnswer[]): Promise<ProviderStub> {
    const started = await startProviderStub(script);
    stubs.push(started);
    return started;
  }

  async function startWorker(primary: ProviderStub, secondary: ProviderStub, env: Record<string, string> = {}): Promise<RunningWorker> {
    worker = await startDispatchWorker(
      loadConfig({ ...service.env, ...accountsEnv(primary.url, secondary.url), ...env }),
      memoryLogger().logger,
    );
    return worker;
  }

  async function generate(overrides: Record<string, unknown> = {}): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('carol', overrides));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  async function deliveries(otpUuid: string): Promise<DeliveryView[]> {
    const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { deliveries: DeliveryView[] }).deliveries;
  }

  /** Waits until the OTP has `count` messages and none is still QUEUED. */
  const settled = (otpUuid: string, count: number) =>
    eventually(async () => {
      const rows = await deliveries(otpUuid);
      return rows.length === count && rows.every((d) => d.state !== 'QUEUED') ? rows : undefined;
    });

  const codeIn = (request: { body: string } | undefined) => new URLSearchParams(request?.body).get('Body')?.match(/[0-9]{6}/)?.[0];

  test('when the primary account refuses the send (401), then the same code goes once through the secondary account and the status shows both attempts', async () => {
    const primary = await stub([{ status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } }]);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary);
    const otpUuid = await generate();
    const rows = await settled(otpUuid, 2);
    expect(rows).toEqual([
      { channel: 'SMS', state: 'FAILED', provider: 'twilio', lastError: 'Authenticate (Twilio 20003)', updatedAt: expect.any(String) },
      { channel: 'SMS', state: 'SENT', failover: 1, providerMessageId: expect.stringMatching(/^SM/), updatedAt: expect.any(String) },
    ]);
    expect(primary.requests).toHaveLength(1);
    expect(secondary.requests).toHaveLength(1);
    const form = new URLSearchParams(secondary.requests[0]?.body);
    expect(form.get('To')).toBe(mobile);
    expect(form.get('From')).toBe('+15005550007');
    expect(secondary.requests[0]?.path).toContain(`/Accounts/${SECONDARY.sid}/Messages.json`);
    expect(codeIn(secondary.requests[0])).toMatch(/^[0-9]{6}$/);
  });

  test("when the number itself is refused (Twilio 21211), then no other account is tried, and the request's fallback channel gets the code", async () => {
    const primary = await stub([
      { status: 400, body: { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 } },
    ]);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary);
    const otpUuid = await generate({ fallbackDispatchOptions: { EMAIL: 'otp_email' } });
    const rows = await settled(otpUuid, 2);
    expect(rows).toEqual([
      expect.objectContaining({ channel: 'SMS', state: 'FAILED', provider: 'twilio' }),
      expect.objectContaining({ channel: 'EMAIL', state: 'SENT', failover: 2 }),
    ]);
    expect(secondary.requests).toHaveLength(0);
    const message = await outboxMessageFor(service, email, otpUuid);
    expect(message.text).toMatch(/[0-9]{6}/);

    // Without a fallback channel the refusal is final: one row, nothing else sent.
    const alone = await generate();
    expect(await settled(alone, 1)).toEqual([expect.objectContaining({ channel: 'SMS', state: 'FAILED' })]);
    expect(secondary.requests).toHaveLength(0);
  });

  test('when a receipt says undelivered, then the code goes once through the other account: repeats of the receipt send nothing more', async () => {
    const first = accepted();
    const primary = await stub([first]);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary);
    const otpUuid = await generate();
    await settled(otpUuid, 1);
    const sid = (first.body as { sid: string }).sid;
    const receipt = { AccountSid: PRIMARY.sid, MessageSid: sid, MessageStatus: 'undelivered', ErrorCode: '30003' };
    expect((await postTwilioStatus(service, receipt, PRIMARY.token)).status).toBe(204);
    expect((await postTwilioStatus(service, receipt, PRIMARY.token)).status).toBe(204);
    const rows = await settled(otpUuid, 2);
    expect(rows).toEqual([
      expect.objectContaining({ channel: 'SMS', state: 'FAILED', provider: 'twilio', lastError: 'undelivered (Twilio 30003)' }),
      expect.objectContaining({ channel: 'SMS', state: 'SENT', failover: 1 }),
    ]);
    expect(codeIn(secondary.requests[0])).toBe(codeIn(primary.requests[0]));
    // The secondary's own receipts are signed with its own token, and only that token is accepted for it.
    const secondSid = rows[1]?.providerMessageId as string;
    const fromSecondary = { AccountSid: SECONDARY.sid, MessageSid: secondSid, MessageStatus: 'delivered' };
    expect((await postTwilioStatus(service, fromSecondary, PRIMARY.token)).status).toBe(403);
    expect((await postTwilioStatus(service, fromSecondary, SECONDARY.token)).status).toBe(204);
    expect((await deliveries(otpUuid))[1]).toEqual(expect.objectContaining({ state: 'DELIVERED', failover: 1 }));
    expect(secondary.requests).toHaveLength(1);
  });

  test("when the undelivered receipt arrives before the worker has recorded its send (Twilio's answer still on its way), then the row still ends FAILED and the code goes once through the other account", async () => {
    let answer: () => void = () => undefined;
    const first = {
      ...accepted(),
      until: new Promise<void>((resolve) => {
        answer = resolve;
      }),
    };
    const primary = await stub([first]);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary);
    const otpUuid = await generate();
    await eventually(async () => (primary.requests.length === 1 ? true : undefined));
    const sid = (first.body as { sid: string }).sid;
    const receipt = { AccountSid: PRIMARY.sid, MessageSid: sid, MessageStatus: 'undelivered', ErrorCode: '30003' };
    expect((await postTwilioStatus(service, receipt, PRIMARY.token)).status).toBe(204);
    expect(await deliveries(otpUuid)).toEqual([expect.objectContaining({ channel: 'SMS', state: 'QUEUED' })]);
    answer();
    const rows = await settled(otpUuid, 2);
    expect(rows).toEqual([
      expect.objectContaining({
        channel: 'SMS',
        state: 'FAILED',
        provider: 'twilio',
        providerMessageId: sid,
        lastError: 'undelivered (Twilio 30003)',
      }),
      expect.objectContaining({ channel: 'SMS', state: 'SENT', failover: 1 }),
    ]);
    expect(codeIn(secondary.requests[0])).toBe(codeIn(primary.requests[0]));
    // The same receipt again, now that the row knows the message: nothing more is sent.
    expect((await postTwilioStatus(service, receipt, PRIMARY.token)).status).toBe(204);
    expect(await deliveries(otpUuid)).toHaveLength(2);
    expect(secondary.requests).toHaveLength(1);
  });

  test('when the OTP was cancelled before the failure receipt, then nothing is sent again', async () => {
    const first = accepted();
    const primary = await stub([first]);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary);
    const otpUuid = await generate({ fallbackDispatchOptions: { EMAIL: 'otp_email' } });
    await settled(otpUuid, 1);
    const cancelled = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancelled.status).toBe(200);
    const receipt = { AccountSid: PRIMARY.sid, MessageSid: (first.body as { sid: string }).sid, MessageStatus: 'failed' };
    expect((await postTwilioStatus(service, receipt, PRIMARY.token)).status).toBe(204);
    expect(await deliveries(otpUuid)).toEqual([expect.objectContaining({ channel: 'SMS', state: 'FAILED', lastError: 'failed' })]);
    expect(secondary.requests).toHaveLength(0);
  });

  test('when the primary account keeps failing, then its breaker opens and new messages go to the secondary; once it recovers, traffic comes back', async () => {
    const script: ScriptedAnswer[] = [serverError];
    const primary = await stub(script);
    const secondary = await stub([accepted()]);
    await startWorker(primary, secondary, {
      PROVIDER_BREAKER_MIN_REQUESTS: '2',
      PROVIDER_BREAKER_ERROR_PERCENT: '50',
      PROVIDER_BREAKER_RESET_SECONDS: '3',
    });
    // Two failed sends open the primary's breaker; the retries then go through the secondary.
    const failing = [await generate(), await generate()];
    for (const otpUuid of failing) {
      expect(await settled(otpUuid, 1)).toEqual([expect.objectContaining({ channel: 'SMS', state: 'SENT' })]);
    }
    expect(await businessRegistry.getSingleMetricAsString('svc_provider_breaker_state')).toContain(
      'svc_provider_breaker_state{channel="SMS",provider="twilio"} 1',
    );
    // While it is open, a new message does not touch the primary at all.
    const seenByPrimary = primary.requests.length;
    const sentAside = await generate();
    expect(await settled(sentAside, 1)).toEqual([expect.objectContaining({ state: 'SENT' })]);
    expect(primary.requests).toHaveLength(seenByPrimary);
    expect(secondary.requests).toHaveLength(3);
    // The primary answers again: after the reset time one trial send goes to it, and its success brings traffic back.
    script.splice(0, script.length, accepted());
    await eventually(
      async () => {
        const before = primary.requests.length;
        await settled(await generate(), 1);
        return primary.requests.length > before ? true : undefined;
      },
      20000,
      250,
    );
    const after = primary.requests.length;
    await settled(await generate(), 1);
    expect(primary.requests.length).toBe(after + 1);
  });

  test('when fallbackDispatchOptions names a channel already in dispatchOptions, an unknown template or an address the user lacks, then 422', async () => {
    const refused = async (overrides: Record<string, unknown>, userId = 'carol') => {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId, overrides));
      expect(res.status).toBe(422);
      return ((await res.json()) as { message: string }).message;
    };
    expect(await refused({ fallbackDispatchOptions: { SMS: 'otp_sms' } })).toBe(
      'fallbackDispatchOptions.SMS: the channel is already in dispatchOptions',
    );
    expect(await refused({ fallbackDispatchOptions: { EMAIL: 'no_such_template' } })).toBe(
      "fallbackDispatchOptions.EMAIL: template 'no_such_template' does not exist for channel EMAIL",
    );
    expect(await refused({ fallbackDispatchOptions: { EMAIL: 'otp_email', SMS: 'otp_sms' } })).toMatch(/fallbackDispatchOptions/);
    await insertUser(service.ctx.mongo, { userId: 'dave', mobileNumber: '+15550007778' });
    expect(await refused({ fallbackDispatchOptions: { EMAIL: 'otp_email' } }, 'dave')).toBe(
      'fallbackDispatchOptions.EMAIL: user has no emailId registered',
    );
  });
});
