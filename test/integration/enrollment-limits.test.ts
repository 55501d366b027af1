import { createClientWithToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

// Three enrollments that send a code per client and five per enterprise, per minute: each test
// sees exactly when a budget is used. Each test has clients of its own.
describe('Enrollment limits: no client sends activation codes to addresses of its choice without end (SMS pumping)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('enrolllimits', {
      RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT: '3',
      RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT_WINDOW_SECONDS: '60',
      RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE: '5',
      RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE_WINDOW_SECONDS: '60',
    });
    await createGroups(service, ['retail']);
  });
  afterAll(async () => {
    await service.close();
  });

  let n = 0;
  const newClient = async (enterpriseId: string, test = false) =>
    (await createClientWithToken(service, { scopes: ['users'], enterpriseId, test })).accessToken;
  const enroll = (token: string, overrides: Record<string, unknown> = {}) =>
    sendJson(`${service.url}/v1/users`, 'POST', token, userBody(`enrolled-${++n}`, overrides));
  const stored = (userId: string) => service.ctx.mongo.collection('users').countDocuments({ userId });

  test('when an enrollment sends a code, then RateLimit-Policy and RateLimit say both budgets and what is left', async () => {
    const res = await enroll(await newClient('ent-headers'));
    expect(res.status).toBe(201);
    expect(res.headers.get('ratelimit-policy')).toBe(
      '"enrollment-messages-per-client";q=3;w=60, "enrollment-messages-per-enterprise";q=5;w=60',
    );
    expect(res.headers.get('ratelimit')).toMatch(
      /^"enrollment-messages-per-client";r=2;t=(60|59), "enrollment-messages-per-enterprise";r=4;t=(60|59)$/,
    );
  });

  test("when a client's budget is spent, then it is refused 429 with Retry-After and no user is stored, while another client of the enterprise still enrolls", async () => {
    const [token, other] = [await newClient('ent-client'), await newClient('ent-client')];
    for (let i = 0; i < 3; i++) expect((await enroll(token)).status).toBe(201);
    const refused = await enroll(token);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      status: 429,
      message: expect.stringMatching(/^Too many requests: retry after \d+ seconds$/),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-policy')).toBe('"enrollment-messages-per-client";q=3;w=60');
    expect(await stored(`enrolled-${n}`)).toBe(0);
    expect((await enroll(other)).status).toBe(201);
  });

  test('when the budget is spent, then an enrollment with a predefinedCode (nothing sent) is still taken, and a bad field is still 422', async () => {
    const token = await newClient('ent-predefined');
    for (let i = 0; i < 3; i++) expect((await enroll(token)).status).toBe(201);
    const predefined = await enroll(token, { predefinedCode: 'HANDED-OUT-1' });
    expect(predefined.status).toBe(201);
    expect(predefined.headers.get('ratelimit-policy')).toBeNull();
    const badField = await enroll(token, { firstName: '' });
    expect(badField.status).toBe(422);
    expect(await badField.json()).toMatchObject({ message: '[Invalid field firstName]' });
  });

  test("when enrollments are refused for the caller's own mistake (the user exists, a group is missing), then the budget is untouched", async () => {
    const token = await newClient('ent-refund');
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('taken-id'))).status).toBe(201);
    for (let i = 0; i < 3; i++) {
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('taken-id'))).status).toBe(409);
      expect((await enroll(token, { primaryGroup: 'no-such-group' })).status).toBe(409);
    }
    expect((await enroll(token)).status).toBe(201);
    expect((await enroll(token)).status).toBe(201);
    expect((await enroll(token)).status).toBe(429);
  });

  test("when an enterprise's clients together spend its budget, then each is refused 429 while another enterprise still enrolls", async () => {
    const clients = [await newClient('ent-shared'), await newClient('ent-shared')];
    for (let i = 0; i < 5; i++) expect((await enroll(clients[i % 2] as string)).status).toBe(201);
    const refused = await enroll(clients[1] as string);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"enrollment-messages-per-enterprise";q=5;w=60');
    expect((await enroll(await newClient('ent-elsewhere'))).status).toBe(201);
  });

  test("when enrollments are refused 400 for a selfie that is no image, then the budget is untouched (the caller's mistake, nothing sent)", async () => {
    const token = await newClient('ent-selfie');
    for (let i = 0; i < 3; i++) {
      const res = await enroll(token, { selfieImage: 'not base64 at all!' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ message: 'Failed.[IMAGE_DECODE_FAILED]' });
    }
    for (let i = 0; i < 3; i++) expect((await enroll(token)).status).toBe(201);
    expect((await enroll(token)).status).toBe(429);
  });

  test("when a test client enrolls, then it is held to its own client budget and counts in its enterprise's like any client (its codes reach nobody, its limits are no looser)", async () => {
    const [testClient, real] = [await newClient('ent-test-mode', true), await newClient('ent-test-mode')];
    for (let i = 0; i < 3; i++) expect((await enroll(testClient)).status).toBe(201);
    const refused = await enroll(testClient);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"enrollment-messages-per-client";q=3;w=60');
    expect((await enroll(real)).status).toBe(201);
    expect((await enroll(real)).status).toBe(201);
    const enterpriseSpent = await enroll(real);
    expect(enterpriseSpent.status).toBe(429);
    expect(enterpriseSpent.headers.get('ratelimit-policy')).toBe('"enrollment-messages-per-enterprise";q=5;w=60');
  });

  test("when a client over its budget keeps asking, then its refused requests take nothing from its enterprise's budget, so the enterprise's other clients still enroll", async () => {
    const [greedy, other] = [await newClient('ent-greedy'), await newClient('ent-greedy')];
    for (let i = 0; i < 3; i++) expect((await enroll(greedy)).status).toBe(201);
    for (let i = 0; i < 4; i++) expect((await enroll(greedy)).status).toBe(429);
    const next = await enroll(other);
    expect(next.status).toBe(201);
    expect(next.headers.get('ratelimit')).toMatch(/"enrollment-messages-per-enterprise";r=1;/);
    expect((await enroll(other)).status).toBe(201);
    expect((await enroll(other)).status).toBe(429);
  });
});
