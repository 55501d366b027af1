import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

// Two OTPs per user per 10 minutes, so each test sees exactly when the budget is used.
describe('OTP limits: who pays for a request, and what the caller is told', () => {
  let service: TestService;
  let token: string;
  beforeAll(async () => {
    service = await startTestService('otplimits', { RATE_LIMIT_OTP_PER_USER: '2', RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  let n = 0;
  async function newUser(): Promise<string> {
    const userId = `limited-${++n}`;
    await insertUser(service.ctx.mongo, { userId, mobileNumber: `+1555000${String(7100 + n)}` });
    return userId;
  }
  const generate = (userId: string, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId, overrides), headers);

  test('when a request is accepted, then RateLimit-Policy and RateLimit say each budget, what is left and when it resets', async () => {
    const userId = await newUser();
    const res = await generate(userId);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-policy')).toBe(
      '"otp-per-client";q=1000;w=60, "otp-per-enterprise";q=5000;w=60, "otp-per-user";q=2;w=600',
    );
    expect(res.headers.get('ratelimit')).toMatch(
      /^"otp-per-client";r=\d+;t=\d+, "otp-per-enterprise";r=\d+;t=\d+, "otp-per-user";r=1;t=(600|599)$/,
    );
  });

  test('when the budget is spent, then 429 carries Retry-After and the spent budget in RateLimit', async () => {
    const userId = await newUser();
    expect((await generate(userId)).status).toBe(200);
    expect((await generate(userId)).status).toBe(200);
    const refused = await generate(userId);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(500);
    expect(refused.headers.get('ratelimit-policy')).toBe('"otp-per-user";q=2;w=600');
    expect(refused.headers.get('ratelimit')).toMatch(/^"otp-per-user";r=0;t=\d+$/);
  });

  test('when an Idempotency-Key request is replayed, then the same uuid comes back marked Idempotent-Replayed and no budget is used', async () => {
    const userId = await newUser();
    const first = await generate(userId, {}, { 'idempotency-key': `replay-${userId}` });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const { otpUuid } = (await first.json()) as { otpUuid: string };
    for (let i = 0; i < 4; i++) {
      const again = await generate(userId, {}, { 'idempotency-key': `replay-${userId}` });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual({ otpUuid });
    }
    // One point of two was used, by the first request only.
    expect((await generate(userId)).status).toBe(200);
    expect((await generate(userId)).status).toBe(429);
  });

  test("when a person's budget is spent, then the requests refused 429 take nothing from the client's budget", async () => {
    const own = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    const ask = (userId: string) => postJson(`${service.url}/v1/svc-otp`, own, otpBody(userId));
    const spent = await newUser();
    for (let i = 0; i < 2; i++) expect((await ask(spent)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await ask(spent)).status).toBe(429);
    const next = await ask(await newUser());
    expect(next.status).toBe(200);
    expect(next.headers.get('ratelimit')).toMatch(/^"otp-per-client";r=997;/);
  });

  test("when requests are refused for the caller's own mistake, then the person's budget is untouched", async () => {
    const userId = await newUser();
    for (let i = 0; i < 5; i++) {
      const mistake = await generate(userId, { dispatchOptions: { SMS: 'no_such_template' } });
      expect(mistake.status).toBe(422);
    }
    expect((await generate(userId)).status).toBe(200);
    expect((await generate(userId)).status).toBe(200);
    expect((await generate(userId)).status).toBe(429);
  });

  test('when a request is refused after its budgets were taken (unknown user, unknown template, no address), then the refusal carries RateLimit-Policy and RateLimit like a 200', async () => {
    await insertUser(service.ctx.mongo, { userId: 'limited-mailless', mobileNumber: '+15550007199' });
    const refusals = [
      { status: 404, res: await generate('limited-nobody') },
      { status: 422, res: await generate(await newUser(), { dispatchOptions: { SMS: 'no_such_template' } }) },
      { status: 422, res: await generate('limited-mailless', { dispatchOptions: { EMAIL: 'otp_email' } }) },
    ];
    for (const { status, res } of refusals) {
      expect(res.status).toBe(status);
      expect(res.headers.get('ratelimit-policy')).toBe(
        '"otp-per-client";q=1000;w=60, "otp-per-enterprise";q=5000;w=60, "otp-per-user";q=2;w=600',
      );
      expect(res.headers.get('ratelimit')).toMatch(
        /^"otp-per-client";r=\d+;t=\d+, "otp-per-enterprise";r=\d+;t=\d+, "otp-per-user";r=1;t=\d+$/,
      );
    }
  });

  test('when a request is refused before its budgets are taken (a missing or invalid field), then the refusal carries no RateLimit fields', async () => {
    const userId = await newUser();
    const missing = await postJson(`${service.url}/v1/svc-otp`, token, { userId });
    const invalid = await generate(userId, { attempts: 0 });
    expect([missing.status, invalid.status]).toEqual([400, 422]);
    for (const res of [missing, invalid]) {
      expect(res.headers.get('ratelimit-policy')).toBeNull();
      expect(res.headers.get('ratelimit')).toBeNull();
    }
  });

  test('when an OTP is validated, then the answer carries the validation budget', async () => {
    const userId = await newUser();
    const { otpUuid } = (await (await generate(userId)).json()) as { otpUuid: string };
    const res = await postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, token, { otp: '000000' });
    expect(res.headers.get('ratelimit-policy')).toBe('"validate-per-client";q=3000;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^"validate-per-client";r=\d+;t=\d+$/);
  });
});
