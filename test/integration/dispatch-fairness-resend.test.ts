import { createClientWithToken } from '../support/auth-helpers.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const FAIR_SHARE = 2;

// No dispatch worker runs: the jobs stay where they were queued, wait list or prioritized set.
describe('resends and dispatch fairness', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('fairness-resend', { DISPATCH_FAIR_SHARE: String(FAIR_SHARE) });
    token = (await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'noisy' })).accessToken;
    for (let i = 0; i < 3; i++)
      await insertUser(service.ctx.mongo, { userId: `noisy-${i}`, enterpriseId: 'noisy', mobileNumber: `+155510000${i}` });
  });
  afterAll(async () => {
    await service.close();
  });

  const counts = () => service.ctx.queues.dispatch.getJobCounts('wait', 'prioritized');

  test("when an enterprise beyond its fair share resends an OTP, then the resend is queued with a priority like a first send (it cannot jump other enterprises' OTPs)", async () => {
    const uuids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(`noisy-${i}`));
      expect(res.status).toBe(200);
      uuids.push(((await res.json()) as { otpUuid: string }).otpUuid);
    }
    expect(await counts()).toEqual({ wait: FAIR_SHARE, prioritized: 1 });

    const resend = await fetch(`${service.url}/v1/svc-otp/${uuids[0]}/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(resend.status).toBe(200);
    expect(await counts()).toEqual({ wait: FAIR_SHARE, prioritized: 2 });
  });
});
