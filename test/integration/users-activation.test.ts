import { generateKeyPairSync } from 'node:crypto';
import { userModel } from '../../core/users/users.repository.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from '../../workers/enrollment/enrollment-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, readOutbox, type OutboxEntry } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

const PATH = '/v1/users/activate';
const wrong = (attemptsLeft: number) => errorBody(422, 'Unprocessable Entity', 'Invalid activation code', PATH, { attemptsLeft });
const locked = errorBody(423, 'Locked', 'Too many wrong activation codes; ask for a new activation code', PATH);
const CODE_RE = /^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/;

function deviceKey(): { kty: string; crv: string; x: string; y: string } {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  return { kty: 'EC', crv: 'P-256', x: jwk.x as string, y: jwk.y as string };
}

describe('Activation: enrollment → enrollment job → dispatch → outbox → POST /v1/users/activate', () => {
  let service: TestService;
  let dispatch: RunningWorker;
  let enrollment: RunningWorker;
  let token: string;
  const workerLogs = memoryLogger();
  let n = 0;
  const nextId = () => `act${++n}`;

  beforeAll(async () => {
    service = await startTestService('usersactivate', { RATE_LIMIT_ACTIVATE_PER_USER: '1000', RATE_LIMIT_ACTIVATE_PER_IP: '10000' });
    await createGroups(service, ['retail']);
    token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    dispatch = await startDispatchWorker(service.config, workerLogs.logger);
    enrollment = await startEnrollmentWorker(service.config, workerLogs.logger);
  });
  afterAll(async () => {
    await enrollment.shutdown();
    await dispatch.shutdown();
    await service.close();
  });

  const activate = (body: unknown) => sendJson(`${service.url}${PATH}`, 'POST', undefined, body);
  const admin = (path: string) => fetch(`${service.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${service.config.adminToken}` } });

  async function messages(to: string, count: number): Promise<OutboxEntry[]> {
    return eventually(async () => {
      const found = (await readOutbox(service, to)).filter((m) => m.text.includes('activation code'));
      return found.length >= count ? found : undefined;
    });
  }
  const codeIn = (text: string) => /activation code is ([A-Z0-9]+)/.exec(text)?.[1] ?? '';
  const keyIn = (text: string) => /verification key (?:is )?([A-Z0-9-]+)/.exec(text)?.[1] ?? '';

  async function enrollWithCode(overrides: Record<string, unknown> = {}, userId = nextId()): Promise<{ userId: string; code: string; email: string }> {
    const email = `${userId.replace('@', '.')}@example.com`;
    const res = await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { emailId: email, ...overrides }));
    expect(res.status).toBe(201);
    const [mail] = await messages(email, 1);
    return { userId, code: codeIn(mail.text), email };
  }

  test('when a user is enrolled with e-mail and mobile, then both activation messages carry the same generated code and verification key', async () => {
    const mobile = uniqueMobile();
    // A userId with `@` also checks that delivery and job ids accept every userId character.
    const { userId, code, email } = await enrollWithCode({ mobileNumber: mobile, firstName: 'Grace' }, 'grace.h@navy-1');
    expect(code).toMatch(CODE_RE);
    const [mail] = await messages(email, 1);
    const [sms] = await messages(mobile, 1);
    expect(mail).toMatchObject({ channel: 'EMAIL', subject: 'Activate your account' });
    const key = keyIn(mail.text);
    expect(key).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/);
    expect(mail.text).toContain('Hello Grace,');
    expect(mail.text).toContain(`your activation code is ${code} and your verification key is ${key}.`);
    expect(mail.html).toContain(`<strong>${code}</strong>`);
    expect(sms.channel).toBe('SMS');
    expect(sms.text).toBe(`Hello Grace, your activation code is ${code} (verification key ${key}).`);

    // The code lives only as an HMAC; the job carries no secret.
    const stored = JSON.stringify(await (await userModel(service.ctx.mongo)).findOne({ userId }).lean());
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(key);
    const job = await service.ctx.queues.enrollment.getJob(`enroll-${userId}-1`);
    expect(job?.data).toEqual({ userId, issue: 1 });
    // No code, e-mail address or full phone number in any log line.
    const logs = JSON.stringify([...service.logLines(), ...workerLogs.lines()]);
    for (const secret of [code, key, email, mobile]) expect(logs).not.toContain(secret);
  });

  test('when the right code is sent with a device key, then 200 ACTIVE, the key is stored and the code cannot be used again', async () => {
    const { userId, code } = await enrollWithCode();
    const publicKeyJwk = deviceKey();
    const res = await activate({ userId, activationCode: code, device: { deviceId: 'phone-1', publicKeyJwk } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId, status: 'ACTIVE', deviceId: 'phone-1' });
    const got = (await (await fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
    expect(got).toMatchObject({ status: 'ACTIVE', device: { deviceId: 'phone-1', publicKeyJwk, registeredAt: expect.any(String) }, activatedAt: expect.any(String) });
    expect(got.activation).toBeUndefined();
    const again = await activate({ userId, activationCode: code });
    expect(again.status).toBe(422);
    expect(await again.json()).toEqual(wrong(4));
  });

  test('when the right code is sent without a device, then 200 ACTIVE without deviceId', async () => {
    const { userId, code } = await enrollWithCode();
    const res = await activate({ userId, activationCode: code });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId, status: 'ACTIVE' });
  });

  test('when wrong codes are sent, then 422 with attempts counting down, and after 5 the right code too is 423 Locked', async () => {
    const { userId, code } = await enrollWithCode();
    for (const left of [4, 3, 2, 1, 0]) {
      const res = await activate({ userId, activationCode: 'WRONG234' });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(wrong(left));
    }
    const res = await activate({ userId, activationCode: code });
    expect(res.status).toBe(423);
    expect(await res.json()).toEqual(locked);
  });

  test('when an admin re-issues a locked activation, then a new code is sent, the old one is refused and the new one activates', async () => {
    const { userId, code, email } = await enrollWithCode();
    for (let i = 0; i < 5; i += 1) await activate({ userId, activationCode: 'WRONG234' });
    const res = await admin(`/admin/users/${userId}/activation`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ userId, status: 'CREATED', activationExpiresAt: expect.any(String) });
    const all = await messages(email, 2);
    const newCode = all.map((m) => codeIn(m.text)).find((c) => c !== code) as string;
    expect(newCode).toMatch(CODE_RE);
    expect(keyIn(all[0].text)).toBe(keyIn(all[1].text));
    const old = await activate({ userId, activationCode: code });
    expect(await old.json()).toEqual(wrong(4));
    const ok = await activate({ userId, activationCode: newCode });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ userId, status: 'ACTIVE' });
  });

  test('when an admin re-issues for an active or unknown user, or without the admin token, then 409, 404 and 401', async () => {
    await insertUser(service.ctx.mongo, { userId: 'already-active', status: 'ACTIVE', emailId: 'aa@example.com' });
    const active = await admin('/admin/users/already-active/activation');
    expect(active.status).toBe(409);
    expect(await active.json()).toEqual(errorBody(409, 'Invalid data.', 'User is ACTIVE', '/admin/users/already-active/activation', { userStatus: 'ACTIVE' }));
    const unknown = await admin('/admin/users/nobody/activation');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/admin/users/nobody/activation'));
    const noToken = await fetch(`${service.url}/admin/users/nobody/activation`, { method: 'POST' });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toEqual(errorBody(401, 'Unauthorized', 'Invalid or missing admin token', '/admin/users/nobody/activation'));
  });

  test('when the code has expired, then the right code gets 410 and a wrong one still 422', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'EXPIRE-ME' }))).status).toBe(201);
    await (await userModel(service.ctx.mongo)).updateOne({ userId }, { $set: { 'activation.expiresAt': new Date(Date.now() - 1000) } });
    const bad = await activate({ userId, activationCode: 'NOPE' });
    expect(await bad.json()).toEqual(wrong(4));
    const res = await activate({ userId, activationCode: 'EXPIRE-ME' });
    expect(res.status).toBe(410);
    expect(await res.json()).toEqual(errorBody(410, 'Gone', 'Activation code expired; ask for a new activation code', PATH));
  });

  test('when the userId is unknown, then every answer is exactly that of a wrong code, down to the lock', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'REAL-CODE' }))).status).toBe(201);
    for (let i = 0; i < 6; i += 1) {
      const real = await activate({ userId, activationCode: 'GUESS' });
      const ghost = await activate({ userId: `ghost-${userId}`, activationCode: 'GUESS' });
      expect(ghost.status).toBe(real.status);
      // Equal but for the clock: the two answers may straddle a second boundary.
      const withoutTime = async (res: Response) => ({ ...((await res.json()) as Record<string, unknown>), timestamp: 'same second' });
      expect(await withoutTime(ghost)).toEqual(await withoutTime(real));
    }
  });

  test('when a deleted user tries to activate, then the answer is that of a wrong code', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'DEL-CODE' }))).status).toBe(201);
    await fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    const res = await activate({ userId, activationCode: 'DEL-CODE' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(wrong(4));
  });

  test('when 20 wrong guesses race, then only 5 are checked and the right code is locked out afterwards', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'RACE-CODE' }))).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 20 }, () => activate({ userId, activationCode: 'WRONG' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(5);
    expect(statuses.filter((s) => s === 423)).toHaveLength(15);
    expect((await activate({ userId, activationCode: 'RACE-CODE' })).status).toBe(423);
  });

  test('when the right code is sent 10 times at once, then exactly one activation succeeds', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'ONCE-CODE' }))).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 10 }, () => activate({ userId, activationCode: 'ONCE-CODE' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  });

  describe('request checks', () => {
    test('when the device key is not a P-256 point, then 422 naming the field, and a valid key then activates', async () => {
      const userId = nextId();
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'DEV-CODE' }))).status).toBe(201);
      const key = deviceKey();
      const offCurve = { ...key, y: key.x };
      const res = await activate({ userId, activationCode: 'DEV-CODE', device: { deviceId: 'p', publicKeyJwk: offCurve } });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field device.publicKeyJwk]', PATH));
      const withPrivate = await activate({ userId, activationCode: 'DEV-CODE', device: { deviceId: 'p', publicKeyJwk: { ...key, d: key.x } } });
      expect(await withPrivate.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field device.publicKeyJwk]', PATH));
      const rsa = await activate({ userId, activationCode: 'DEV-CODE', device: { deviceId: 'p', publicKeyJwk: { ...key, kty: 'RSA' } } });
      expect(await rsa.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field device.publicKeyJwk.kty]', PATH));
      const ok = await activate({ userId, activationCode: 'DEV-CODE', device: { deviceId: 'p', publicKeyJwk: key } });
      expect(ok.status).toBe(200);
    });

    test('when activationCode is missing, then 422 [Invalid field activationCode]', async () => {
      const res = await activate({ userId: 'x' });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field activationCode]', PATH));
    });

    test('when the body is not JSON or not JSON at all, then 400 and 415', async () => {
      const bad = await activate('{');
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', PATH));
      const text = await fetch(`${service.url}${PATH}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(text.status).toBe(415);
      expect(await text.json()).toEqual(errorBody(415, 'Unsupported Media Type', "Content type 'text/plain' not supported", PATH));
    });
  });
});

describe('Activation rate limits', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('usersactlimits', { RATE_LIMIT_ACTIVATE_PER_USER: '3', RATE_LIMIT_ACTIVATE_PER_IP: '8' });
  });
  afterAll(async () => {
    await service.close();
  });
  const activate = (userId: string) => sendJson(`${service.url}${PATH}`, 'POST', undefined, { userId, activationCode: 'GUESS' });
  const limited = errorBody(429, 'Too Many Requests', expect.stringMatching(/^Too many requests: retry after \d+ seconds$/) as unknown as string, PATH);

  test('when one userId is tried more often than the per-user budget, then 429 with Retry-After', async () => {
    for (let i = 0; i < 3; i += 1) expect((await activate('limited-user')).status).toBe(422);
    const res = await activate('limited-user');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toEqual(limited);
  });

  test('when one address tries more than the per-address budget across userIds, then 429', async () => {
    // 4 of the 8 points were spent by the previous test from the same address.
    for (let i = 0; i < 4; i += 1) expect((await activate(`spread-${i}`)).status).toBe(422);
    const res = await activate('spread-x');
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual(limited);
  });
});
