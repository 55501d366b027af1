import { createClientWithToken } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';

// Two notifications per person per 10 minutes and five per client per minute, so each test sees
// exactly when a budget is used. Each test has a client of its own (its own client budget).
describe('Approval notification limits: no person is asked again and again, no client floods the queues', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('notiflimits', {
      RATE_LIMIT_NOTIFICATIONS_PER_USER: '2',
      RATE_LIMIT_NOTIFICATIONS_PER_USER_WINDOW_SECONDS: '600',
      RATE_LIMIT_NOTIFICATIONS_PER_CLIENT: '5',
      RATE_LIMIT_NOTIFICATIONS_PER_CLIENT_WINDOW_SECONDS: '60',
    });
  });
  afterAll(async () => {
    await service.close();
  });

  let n = 0;
  async function newUser(userId = `asked-${++n}`): Promise<string> {
    await insertUser(service.ctx.mongo, { userId });
    return userId;
  }
  const newClient = async () => (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
  const create = (token: string, userId: string, headers: Record<string, string> = {}) =>
    sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody(userId), headers);

  test('when a notification is created, then RateLimit-Policy and RateLimit say both budgets, what is left and when each resets', async () => {
    const res = await create(await newClient(), await newUser());
    expect(res.status).toBe(201);
    expect(res.headers.get('ratelimit-policy')).toBe(
      '"notifications-per-client";q=5;w=60, "notifications-per-enterprise";q=5000;w=60, "notifications-per-user";q=2;w=600',
    );
    expect(res.headers.get('ratelimit')).toMatch(
      /^"notifications-per-client";r=4;t=(60|59), "notifications-per-enterprise";r=\d+;t=(60|59), "notifications-per-user";r=1;t=(600|599)$/,
    );
  });

  test("when a person's budget is spent, then every client of the enterprise is refused 429 with Retry-After for that person, and others are still asked", async () => {
    const [first, second] = [await newClient(), await newClient()];
    const person = await newUser();
    expect((await create(first, person)).status).toBe(201);
    expect((await create(second, person)).status).toBe(201);
    for (const token of [first, second]) {
      const refused = await create(token, person);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({
        status: 429,
        error: 'Too Many Requests',
        message: expect.stringMatching(/^Too many requests: retry after \d+ seconds$/),
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(500);
      expect(refused.headers.get('ratelimit-policy')).toBe('"notifications-per-user";q=2;w=600');
      expect(refused.headers.get('ratelimit')).toMatch(/^"notifications-per-user";r=0;t=\d+$/);
    }
    expect(await service.ctx.mongo.collection('notifications').countDocuments({ userId: person })).toBe(2);
    expect((await create(first, await newUser())).status).toBe(201);
  });

  test("when a client's budget is spent, then it is refused 429 for anyone, while another client still creates", async () => {
    const token = await newClient();
    for (let i = 0; i < 5; i++) expect((await create(token, await newUser())).status).toBe(201);
    const refused = await create(token, await newUser());
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"notifications-per-client";q=5;w=60');
    expect((await create(await newClient(), await newUser())).status).toBe(201);
  });

  test('when a create is replayed with its Idempotency-Key, then no budget is used', async () => {
    const token = await newClient();
    const person = await newUser();
    const first = await create(token, person, { 'idempotency-key': `limits-${person}` });
    expect(first.status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const again = await create(token, person, { 'idempotency-key': `limits-${person}` });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    // One point of two was used, by the first request only.
    expect((await create(token, person)).status).toBe(201);
    expect((await create(token, person)).status).toBe(429);
  });

  test("when requests are refused for the caller's own mistake (a user who does not exist yet), then the person's budget is untouched", async () => {
    const token = await newClient();
    const person = `not-yet-${++n}`;
    for (let i = 0; i < 3; i++) expect((await create(token, person)).status).toBe(404);
    await newUser(person);
    expect((await create(token, person)).status).toBe(201);
    expect((await create(token, person)).status).toBe(201);
    expect((await create(token, person)).status).toBe(429);
  });

  test("when a person's budget is spent, then a body that breaks a field rule (a repeated action, a refused callbackUrl) is still told its 422", async () => {
    const token = await newClient();
    const person = await newUser();
    expect((await create(token, person)).status).toBe(201);
    expect((await create(token, person)).status).toBe(201);
    expect((await create(token, person)).status).toBe(429);
    const repeated = await sendJson(`${service.url}/v1/notifications`, 'POST', token, {
      ...notificationBody(person),
      actions: [
        { label: 'Approve', action: 'accept', authlevel: 1 },
        { label: 'Approve again', action: 'accept', authlevel: 1 },
      ],
    });
    expect(repeated.status).toBe(422);
    expect(await repeated.json()).toMatchObject({ message: 'Invalid field actions: action values must be distinct' });
    const plainHttp = await sendJson(`${service.url}/v1/notifications`, 'POST', token, {
      ...notificationBody(person),
      callbackUrl: 'http://example.com/cb',
    });
    expect(plainHttp.status).toBe(422);
    expect(await plainHttp.json()).toMatchObject({
      message: 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)',
    });
  });
});

describe("Approval notification limits: one enterprise's clients together", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('notifentlimits', {
      RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE: '3',
      RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE_WINDOW_SECONDS: '60',
    });
  });
  afterAll(async () => {
    await service.close();
  });

  const clientOf = async (enterpriseId: string) =>
    (await createClientWithToken(service, { scopes: ['notifications'], enterpriseId })).accessToken;
  const create = async (token: string, enterpriseId: string, userId: string) => {
    await insertUser(service.ctx.mongo, { userId, enterpriseId });
    return sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody(userId));
  };

  test("when an enterprise's clients together spend its budget, then each of them is refused 429 while another enterprise still creates", async () => {
    const [first, second] = [await clientOf('acme'), await clientOf('acme')];
    expect((await create(first, 'acme', 'acme-1')).status).toBe(201);
    expect((await create(first, 'acme', 'acme-2')).status).toBe(201);
    expect((await create(second, 'acme', 'acme-3')).status).toBe(201);
    const refused = await create(second, 'acme', 'acme-4');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"notifications-per-enterprise";q=3;w=60');
    expect((await create(first, 'acme', 'acme-5')).status).toBe(429);
    expect((await create(await clientOf('globex'), 'globex', 'globex-1')).status).toBe(201);
  });
});
