import { loadConfig } from '../../core/platform/config/config.js';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { businessRegistry } from '../../core/platform/metrics/business-metrics.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

interface DeliveryView {
  channel: string;
  state: string;
  lastError?: string;
}

describe('test mode: a test client never reaches a provider', () => {
  let service: TestService;
  let stub: ProviderStub;
  let worker: RunningWorker;
  let testToken: string;
  let testClientId: string;
  let realToken: string;
  let realClientId: string;
  const admin = () => ({ authorization: `Bearer ${service.config.adminToken ?? ''}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    // Twilio is configured and points at a stub that counts every request it gets.
    stub = await startProviderStub([{ status: 201, body: { sid: 'SM22222222222222222222222222222222', status: 'queued' } }]);
    const twilio = {
      TWILIO_ACCOUNT_SID: `AC${'ef'.repeat(16)}`,
      TWILIO_AUTH_TOKEN: 'test-mode-twilio-token',
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE_URL: stub.url,
    };
    service = await startTestService('testmode', { RATE_LIMIT_OTP_PER_USER: '2', ...twilio });
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    const created = await fetch(`${service.url}/admin/clients`, {
      method: 'POST',
      headers: admin(),
      body: JSON.stringify({ name: 'integration tests', scopes: ['otp'], allowedIps: ['127.0.0.1/32', '::1/128'], test: true }),
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { client_id: string; client_secret: string };
    testClientId = body.client_id;
    const shown = await fetch(`${service.url}/admin/clients/${testClientId}`, { headers: admin() });
    expect(((await shown.json()) as { test: boolean }).test).toBe(true);
    const tokenRes = await requestToken(service, { clientId: body.client_id, clientSecret: body.client_secret });
    testToken = ((await tokenRes.json()) as { access_token: string }).access_token;
    const real = await createClientWithToken(service, { scopes: ['otp'] });
    realToken = real.accessToken;
    realClientId = real.clientId;
    await insertUser(service.ctx.mongo, { userId: 'ok', mobileNumber: '+15550001234', emailId: 'ok@example.com' });
    await insertUser(service.ctx.mongo, { userId: 'fails', mobileNumber: '+15005550001', emailId: 'failed@example.com' });
    await insertUser(service.ctx.mongo, { userId: 'fixed', mobileNumber: '+15550004321' });
    await insertUser(service.ctx.mongo, { userId: 'resender', emailId: 'FAILED@example.org' });
    await insertUser(service.ctx.mongo, { userId: 'undelivered', mobileNumber: '+15005550002', emailId: 'undelivered@example.com' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
    await stub.close();
  });

  async function generate(token: string, userId: string, overrides: Record<string, unknown> = {}): Promise<Response> {
    return postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId, overrides));
  }

  const settled = (otpUuid: string) =>
    eventually(async () => {
      const res = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${testToken}` } });
      const rows = ((await res.json()) as { deliveries: DeliveryView[] }).deliveries;
      return rows.length > 0 && rows.every((d) => d.state === 'DELIVERED' || d.state === 'FAILED') ? rows : undefined;
    });

  test('when a test client asks for an OTP, then the message lands in the outbox, DELIVERED, and Twilio is never called', async () => {
    const res = await generate(testToken, 'ok');
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const message = await outboxMessageFor(service, '+15550001234', otpUuid);
    expect(message.text).toMatch(/\d{6}/);
    expect(await settled(otpUuid)).toEqual([expect.objectContaining({ channel: 'SMS', state: 'DELIVERED' })]);
    expect(stub.requests).toHaveLength(0);
  });

  test('when a test OTP is resent, then the resend lands in the outbox too and Twilio is still never called', async () => {
    const res = await generate(testToken, 'resender', { dispatchOptions: { EMAIL: 'otp_email' } });
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    await settled(otpUuid);
    const resent = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/resend`, testToken, undefined);
    expect(resent.status).toBe(200);
    const rows = await eventually(async () => {
      const all = await settled(otpUuid);
      return all.length === 2 ? all : undefined;
    });
    expect(rows.map((r) => r.state)).toEqual(['FAILED', 'FAILED']);
    expect(stub.requests).toHaveLength(0);
  });

  test.each([
    ['fails', 'failed (test mode)'],
    ['undelivered', 'undelivered (test mode)'],
  ])('when the user %s has a magic address, then the SMS and e-mail end FAILED with that reason', async (userId, reason) => {
    const res = await generate(testToken, userId, { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } });
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const rows = await settled(otpUuid);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toEqual(expect.objectContaining({ state: 'FAILED', lastError: reason }));
    expect(stub.requests).toHaveLength(0);
  });

  test('when a test SMS fails (the magic number) and the request named a fallback channel, then the code goes to that channel once, still to the outbox', async () => {
    const res = await generate(testToken, 'fails', { fallbackDispatchOptions: { EMAIL: 'otp_email' } });
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    const rows = await eventually(async () => {
      const status = await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${testToken}` } });
      const views = ((await status.json()) as { deliveries: DeliveryView[] }).deliveries;
      return views.length === 2 && views[1]?.state === 'FAILED' ? views : undefined;
    });
    // The fallback address is a magic one too: it fails as well, and nothing follows it.
    expect(rows).toEqual([
      expect.objectContaining({ channel: 'SMS', state: 'FAILED', provider: 'test', lastError: 'failed (test mode)' }),
      expect.objectContaining({ channel: 'EMAIL', state: 'FAILED', failover: 2, lastError: 'failed (test mode)' }),
    ]);
    const sms = await outboxMessageFor(service, '+15005550001', otpUuid);
    const email = await outboxMessageFor(service, 'failed@example.com', otpUuid);
    expect(email.text.match(/[0-9]{6}/)?.[0]).toBe(sms.text.match(/[0-9]{6}/)?.[0]);
    expect(stub.requests).toHaveLength(0);
  });

  test('when a test client uses up its per-user budget, then a real client still has the real one for that user', async () => {
    // The budget is 2 per user; the first test already used one of the test budget.
    expect((await generate(testToken, 'ok')).status).toBe(200);
    expect((await generate(testToken, 'ok')).status).toBe(429);
    const real = await generate(realToken, 'ok');
    expect(real.status).toBe(200);
    await eventually(async () => (stub.requests.length === 1 ? true : undefined));
  });

  test('when test messages are counted, then they carry provider="test" in svc_deliveries_total', async () => {
    const metrics = await businessRegistry.getSingleMetricAsString('svc_deliveries_total');
    expect(metrics).toMatch(/svc_deliveries_total\{channel="SMS",provider="test",state="SENT"\} \d+/);
    expect(metrics).toMatch(/svc_deliveries_total\{channel="SMS",provider="test",state="DELIVERED"\} \d+/);
  });

  test('when an admin clears and sets the flag, then the client shows it and the activity record names it', async () => {
    const patch = (test: boolean) =>
      fetch(`${service.url}/admin/clients/${testClientId}`, { method: 'PATCH', headers: admin(), body: JSON.stringify({ test }) });
    const cleared = await patch(false);
    expect(cleared.status).toBe(200);
    expect(((await cleared.json()) as { test: boolean }).test).toBe(false);
    expect(((await (await patch(true)).json()) as { test: boolean }).test).toBe(true);
    const { entries } = await createActivityRepository(service.ctx.mongo).list({ limit: 100 });
    const ours = entries.filter((e) => e.clientId === testClientId).map((e) => [e.action, e.comments]);
    expect(ours).toEqual(
      expect.arrayContaining([
        ['client.created', 'test=true'],
        ['client.updated', 'test=false'],
        ['client.updated', 'test=true'],
      ]),
    );
  });

  test('when the flag is not a boolean, then the admin API refuses it with 422 and the client keeps its mode', async () => {
    const res = await fetch(`${service.url}/admin/clients/${testClientId}`, {
      method: 'PATCH',
      headers: admin(),
      body: JSON.stringify({ test: 'yes' }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toBe('Invalid field test: must be boolean');
    const shown = await fetch(`${service.url}/admin/clients/${testClientId}`, { headers: admin() });
    expect(((await shown.json()) as { test: boolean }).test).toBe(true);
  });

  test('when a test client has a fixed code for a user, then that code is sent and validates; one that does not fit the format is refused with 422', async () => {
    const patch = (id: string, body: unknown) =>
      fetch(`${service.url}/admin/clients/${id}`, { method: 'PATCH', headers: admin(), body: JSON.stringify(body) });
    const set = await patch(testClientId, { testCodes: [{ userId: 'fixed', code: '424242' }] });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { testCodes: unknown }).testCodes).toEqual([{ userId: 'fixed', code: '424242' }]);
    // The client cache of this process was invalidated by the change: the next request sees it.
    const res = await generate(testToken, 'fixed');
    expect(res.status).toBe(200);
    const { otpUuid } = (await res.json()) as { otpUuid: string };
    expect((await outboxMessageFor(service, '+15550004321', otpUuid)).text).toContain('424242');
    const validated = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, testToken, { otp: '424242' });
    expect(((await validated.json()) as { status: string }).status).toBe('SUCCESS');

    expect((await patch(testClientId, { testCodes: [{ userId: 'fixed', code: 'ABCDEF' }] })).status).toBe(200);
    const refused = await generate(testToken, 'fixed');
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { message: string }).message).toBe(
      'Invalid field testCodes: the fixed code of user fixed does not fit the OTP format requested',
    );
  });

  test("when the user's budget is spent and the fixed code does not fit, then 422 and the refused budget is no unhandled rejection (which would end the process)", async () => {
    const unhandled: unknown[] = [];
    const collect = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', collect);
    try {
      const patch = (codes: unknown) =>
        fetch(`${service.url}/admin/clients/${testClientId}`, {
          method: 'PATCH',
          headers: admin(),
          body: JSON.stringify({ testCodes: codes }),
        });
      await insertUser(service.ctx.mongo, { userId: 'fixed-spent', mobileNumber: '+15550004322' });
      expect((await patch([{ userId: 'fixed-spent', code: '515151' }])).status).toBe(200);
      expect((await generate(testToken, 'fixed-spent')).status).toBe(200);
      expect((await generate(testToken, 'fixed-spent')).status).toBe(200);
      expect((await generate(testToken, 'fixed-spent')).status).toBe(429);
      expect((await patch([{ userId: 'fixed-spent', code: 'ABCDEF' }])).status).toBe(200);
      const refused = await generate(testToken, 'fixed-spent');
      expect(refused.status).toBe(422);
      // One more round trip: a rejection nobody handled is reported once the event loop turns.
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', collect);
    }
  });

  test('when fixed codes are given to a client that is not a test client, then 422; clearing the flag drops them', async () => {
    const res = await fetch(`${service.url}/admin/clients/${realClientId}`, {
      method: 'PATCH',
      headers: admin(),
      body: JSON.stringify({ testCodes: [{ userId: 'ok', code: '111111' }] }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toBe(
      'Invalid field testCodes: only a test client (test: true) can have fixed codes',
    );
    const cleared = await fetch(`${service.url}/admin/clients/${testClientId}`, {
      method: 'PATCH',
      headers: admin(),
      body: JSON.stringify({ test: false }),
    });
    expect(((await cleared.json()) as { testCodes: unknown }).testCodes).toEqual([]);
    await fetch(`${service.url}/admin/clients/${testClientId}`, {
      method: 'PATCH',
      headers: admin(),
      body: JSON.stringify({ test: true }),
    });
  });
});
