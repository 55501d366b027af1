import { generateKeyPairSync } from 'node:crypto';
import { jest } from '@jest/globals';
import type { ActivationThrottle } from '../../core/users/activation-throttle.js';
import { signInLockChangeChecks } from '../../core/sign-in/sign-in-lock-activity.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { userModel } from '../../core/users/users.repository.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from '../../workers/enrollment/enrollment-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, readOutbox, type OutboxEntry } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { postJsonFrom } from '../support/local-address.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

const PATH = '/v1/users/activate';
const wrong = (attemptsLeft: number) => errorBody(422, 'Invalid data.', 'Invalid activation code', PATH, { attemptsLeft });
const locked = errorBody(423, 'Locked', 'Too many wrong activation codes; ask for a new activation code', PATH);
const throttled = (seconds: number) => errorBody(429, 'Too Many Requests', `Too many requests: retry after ${seconds} seconds`, PATH);
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
    service = await startTestService('usersactivate', { RATE_LIMIT_ACTIVATE_PER_IP: '10000' });
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
  const admin = (path: string) =>
    fetch(`${service.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${service.config.adminToken}` } });

  async function messages(to: string, count: number): Promise<OutboxEntry[]> {
    return eventually(async () => {
      const found = (await readOutbox(service, to)).filter((m) => /activation code/i.test(m.text));
      return found.length >= count ? found : undefined;
    });
  }
  const codeIn = (text: string) => /Activation code: ([A-Z0-9]+)/.exec(text)?.[1] ?? '';
  const keyIn = (text: string) => /It must be ([A-Z0-9-]+)\./.exec(text)?.[1] ?? '';
  const linkIn = (text: string) => /Open this link on the phone: (\S+)/.exec(text)?.[1] ?? '';

  async function enrollWithCode(
    overrides: Record<string, unknown> = {},
    userId = nextId(),
  ): Promise<{ userId: string; code: string; email: string }> {
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
    expect(mail.text).toContain(`Organization: default\nUser id: grace.h@navy-1\nActivation code: ${code}\n`);
    // The link opens the approver app with everything activation needs in its fragment.
    expect(linkIn(mail.text)).toBe(`${service.config.publicUrl}/demo/approver/#enterprise=default&user=grace.h%40navy-1&code=${code}`);
    expect(mail.html).toContain(`<strong>${code}</strong>`);
    // Escaped for HTML (`&#x3D;` is `=`), as every macro value is.
    expect(mail.html).toContain(
      `href="${service.config.publicUrl}/demo/approver/#enterprise&#x3D;default&amp;user&#x3D;grace.h%40navy-1&amp;code&#x3D;${code}"`,
    );
    expect(sms.channel).toBe('SMS');
    expect(sms.text).toBe(
      `Hello Grace, activate the app on this phone: ${linkIn(mail.text)} (or type organization default, user id grace.h@navy-1, ` +
        `activation code ${code}). The app then shows verification key ${key}; if not, tell your administrator.`,
    );

    // The code lives only as an HMAC; the job carries no secret.
    const stored = JSON.stringify(await (await userModel(service.ctx.mongo)).findOne({ userId }).lean());
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(key);
    const job = await service.ctx.queues.enrollment.getJob(`enroll-${userId}-1`);
    expect(job?.data).toEqual({ enterpriseId: 'default', userId, issue: 1 });
    // No code, e-mail address or full phone number in any log line.
    const logs = JSON.stringify([...service.logLines(), ...workerLogs.lines()]);
    for (const secret of [code, key, email, mobile]) expect(logs).not.toContain(secret);
  });

  test('when the right code is sent with a device key, then 200 ACTIVE, the key is stored and the code cannot be used again', async () => {
    const { userId, code } = await enrollWithCode();
    const publicKeyJwk = deviceKey();
    const res = await activate({ userId, activationCode: code, device: { deviceId: 'phone-1', publicKeyJwk } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      userId,
      status: 'ACTIVE',
      verificationKey: expect.stringMatching(/^[A-Z0-9]{6}$/),
      deviceId: 'phone-1',
    });
    const got = (await (
      await fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Record<string, unknown>;
    expect(got).toMatchObject({
      status: 'ACTIVE',
      device: { deviceId: 'phone-1', publicKeyJwk, registeredAt: expect.any(String) },
      activatedAt: expect.any(String),
    });
    expect(got.activation).toBeUndefined();
    const again = await activate({ userId, activationCode: code });
    expect(again.status).toBe(422);
    expect(await again.json()).toEqual(wrong(99));
  });

  test('when a user of another enterprise than default is enrolled, then the job and message carry that enterprise and the code activates there only', async () => {
    const acme = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'acme' })).accessToken;
    const userId = nextId();
    const email = `${userId}.acme@example.com`;
    expect((await sendJson(`${service.url}/v1/users`, 'POST', acme, userBody(userId, { emailId: email }))).status).toBe(201);
    const job = await service.ctx.queues.enrollment.getJob(`enroll-acme~${userId}-1`);
    expect(job?.data).toEqual({ enterpriseId: 'acme', userId, issue: 1 });
    const [mail] = await messages(email, 1);
    const code = codeIn(mail.text);
    expect(mail.text).toContain(`Organization: acme\n`);
    // The link names the enterprise, so an app activates this user without asking for it.
    const link = new URL(linkIn(mail.text));
    expect(Object.fromEntries(new URLSearchParams(link.hash.slice(1)))).toEqual({ enterprise: 'acme', user: userId, code });
    expect(await (await activate({ userId, activationCode: code })).json()).toEqual(wrong(99));
    const ok = await activate({ enterpriseId: 'acme', userId, activationCode: code });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: keyIn(mail.text) });
  });

  test('when the right code is sent without a device, then 200 ACTIVE without deviceId', async () => {
    const { userId, code } = await enrollWithCode();
    const res = await activate({ userId, activationCode: code });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: expect.any(String) });
  });

  test('when the generated code is typed in lower case, then it activates like the code itself (codes ignore letter case)', async () => {
    const { userId, code } = await enrollWithCode();
    expect(code).toMatch(/^[A-Z0-9]{8}$/);
    const res = await activate({ userId, activationCode: code.toLowerCase() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: expect.any(String) });
    expect(await (await activate({ userId, activationCode: code })).json()).toEqual(wrong(99));
  });

  test('when a stranger sends 5+ wrong codes from one address, then that address waits (429, Retry-After) while the right code from another address activates', async () => {
    const { userId, code } = await enrollWithCode();
    for (const left of [99, 98, 97, 96, 95, 94]) {
      const res = await activate({ userId, activationCode: 'WRONG234' });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(wrong(left));
    }
    // After 5 free failures the 6th opened a 1-second wait for this address.
    const waiting = await activate({ userId, activationCode: code });
    expect(waiting.status).toBe(429);
    expect(waiting.headers.get('retry-after')).toBe('1');
    expect(await waiting.json()).toEqual(throttled(1));
    const owner = await postJsonFrom('127.0.0.2', `${service.url}${PATH}`, { userId, activationCode: code });
    expect(owner.status).toBe(200);
    expect(owner.body).toEqual({ userId, status: 'ACTIVE', verificationKey: expect.any(String) });
  });

  test('when one address keeps guessing, then its waits double (1 s, then 2 s) and a refused try is not counted', async () => {
    const { userId } = await enrollWithCode();
    for (let i = 0; i < 6; i += 1) expect((await activate({ userId, activationCode: 'WRONG234' })).status).toBe(422);
    expect((await activate({ userId, activationCode: 'WRONG234' })).status).toBe(429);
    // Keep trying until the 1-second wait is over: every refused try along the way must leave the
    // count alone, so the first checked one is the 7th failure.
    const seventh = await eventually(
      async () => {
        const res = await activate({ userId, activationCode: 'WRONG234' });
        if (res.status !== 429) return res;
        await res.body?.cancel();
        return undefined;
      },
      5000,
      100,
    );
    expect(seventh.status).toBe(422);
    expect(await seventh.json()).toEqual(wrong(93));
    const next = await activate({ userId, activationCode: 'WRONG234' });
    expect(next.status).toBe(429);
    expect(next.headers.get('retry-after')).toBe('2');
  });

  test('when an admin re-issues after many wrong codes, then a new code is sent, the old one is refused and the new one activates', async () => {
    const { userId, code, email } = await enrollWithCode();
    for (let i = 0; i < 5; i += 1) await activate({ userId, activationCode: 'WRONG234' });
    const res = await admin(`/admin/users/${userId}/activation`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ userId, status: 'CREATED', activationExpiresAt: expect.any(String) });
    const all = await messages(email, 2);
    const newCode = all.map((m) => codeIn(m.text)).find((c) => c !== code) as string;
    expect(newCode).toMatch(CODE_RE);
    expect(keyIn(all[0].text)).toBe(keyIn(all[1].text));
    // The user's count started over with the new code (this address's own count did not).
    const old = await postJsonFrom('127.0.0.3', `${service.url}${PATH}`, { userId, activationCode: code });
    expect(old.body).toEqual(wrong(99));
    const ok = await postJsonFrom('127.0.0.3', `${service.url}${PATH}`, { userId, activationCode: newCode });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ userId, status: 'ACTIVE', verificationKey: keyIn(all[0].text) });
  });

  test('when an admin re-issues for an active or unknown user, or without the admin token, then 409, 404 and 401', async () => {
    await insertUser(service.ctx.mongo, { userId: 'already-active', status: 'ACTIVE', emailId: 'aa@example.com' });
    const active = await admin('/admin/users/already-active/activation');
    expect(active.status).toBe(409);
    expect(await active.json()).toEqual(
      errorBody(409, 'Invalid data.', 'User is ACTIVE', '/admin/users/already-active/activation', { userStatus: 'ACTIVE' }),
    );
    const unknown = await admin('/admin/users/nobody/activation');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/admin/users/nobody/activation'));
    const noToken = await fetch(`${service.url}/admin/users/nobody/activation`, { method: 'POST' });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toEqual(
      errorBody(401, 'Unauthorized', 'Invalid or missing admin token', '/admin/users/nobody/activation'),
    );
  });

  test('when the code has expired, then the right code gets 410 and a wrong one still 422', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'EXPIRE-ME' }))).status).toBe(201);
    await (await userModel(service.ctx.mongo)).updateOne({ userId }, { $set: { 'activation.expiresAt': new Date(Date.now() - 1000) } });
    const bad = await activate({ userId, activationCode: 'NOPE' });
    expect(await bad.json()).toEqual(wrong(99));
    const res = await activate({ userId, activationCode: 'EXPIRE-ME' });
    expect(res.status).toBe(410);
    expect(await res.json()).toEqual(errorBody(410, 'Gone', 'Activation code expired; ask for a new activation code', PATH));
  });

  test('when the userId is unknown, then every answer is exactly that of a wrong code, down to the throttle', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'REAL-CODE' }))).status).toBe(201);
    const statuses: number[] = [];
    // Seven rounds: the 7th real try comes well within the 1-second wait the 6th opened.
    for (let i = 0; i < 7; i += 1) {
      const real = await activate({ userId, activationCode: 'GUESS' });
      const ghost = await activate({ userId: `ghost-${userId}`, activationCode: 'GUESS' });
      expect(ghost.status).toBe(real.status);
      expect(ghost.headers.get('retry-after')).toBe(real.headers.get('retry-after'));
      statuses.push(real.status);
      // Equal but for the clock: the two answers may straddle a second boundary.
      const withoutTime = async (res: Response) => ({ ...((await res.json()) as Record<string, unknown>), timestamp: 'same second' });
      expect(await withoutTime(ghost)).toEqual(await withoutTime(real));
    }
    expect(statuses).toEqual([422, 422, 422, 422, 422, 422, 429]);
  });

  test('when a deleted user tries to activate, then the answer is that of a wrong code', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'DEL-CODE' }))).status).toBe(201);
    await fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    const res = await activate({ userId, activationCode: 'DEL-CODE' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(wrong(99));
  });

  describe('when a step after the activation was stored fails', () => {
    const SOON_AFTER_GRACE = () => new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    const recorded = async (userId: string) => {
      const res = await fetch(`${service.url}/admin/activity?enterpriseId=default&userId=${userId}`, {
        headers: { authorization: `Bearer ${service.config.adminToken}` },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { activity: { action: string }[] }).activity.map((e) => e.action);
    };
    const statusOf = async (userId: string) =>
      (await service.services.repositories.users.findUser({ enterpriseId: 'default', userId }))?.status;
    const sweepDeps = () => ({
      ...service.services.repositories,
      changeChecks: signInLockChangeChecks(service.services.repositories.signInFailures),
      logger: workerLogs.logger,
      graceMs: service.config.sweeperGraceMs,
    });
    afterEach(() => jest.restoreAllMocks());
    /** The activity record refuses every write about this user (until the mocks are restored). */
    const recordFailsFor = (userId: string) => {
      const { activity } = service.services.repositories;
      const { append, appendOnce } = activity;
      const down = () => Promise.reject(new Error('MongoDB stepped down'));
      jest.spyOn(activity, 'append').mockImplementation((entry) => (entry.userId === userId ? down() : append(entry)));
      jest
        .spyOn(activity, 'appendOnce')
        .mockImplementation((id, entry, at) => (entry.userId === userId ? down() : appendOnce(id, entry, at)));
    };

    test('when the activity record cannot be written, then 200 with the verification key, the user is ACTIVE and the sweep records the activation once', async () => {
      const { userId, code, email } = await enrollWithCode();
      const [mail] = await messages(email, 1);
      recordFailsFor(userId);

      const res = await activate({ userId, activationCode: code });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: keyIn(mail.text) });
      expect(await statusOf(userId)).toBe('ACTIVE');
      jest.restoreAllMocks();

      expect(await recorded(userId)).toEqual(['user.enrolled']);
      // Twice: the second sweep finds nothing left to write.
      for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps(), SOON_AFTER_GRACE());
      expect(await recorded(userId)).toEqual(['user.activated', 'user.enrolled']);
      const logs = JSON.stringify(service.logLines());
      expect(logs).toContain('activity entry not written');
      for (const secret of [code, keyIn(mail.text), email]) expect(logs).not.toContain(secret);
    });

    test('when the activity record cannot be written after an activation ended a sign-in lock, then 200 and the sweep records the activation and the unlock once each', async () => {
      const { userId, code } = await enrollWithCode();
      const ref = { enterpriseId: 'default', userId };
      const { signInFailures } = service.services.repositories;
      await signInFailures.take(ref, 1, new Date());
      expect(await signInFailures.lock(ref, new Date())).toBe(true);
      recordFailsFor(userId);

      expect((await activate({ userId, activationCode: code })).status).toBe(200);
      expect(await signInFailures.isLocked(ref, 1)).toBe(false);
      jest.restoreAllMocks();

      expect(await recorded(userId)).toEqual(['user.enrolled']);
      for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps(), SOON_AFTER_GRACE());
      expect(await recorded(userId)).toEqual(['user.sign-in-unlocked', 'user.activated', 'user.enrolled']);
    });

    test('when Redis cannot reset the throttle or the sign-in lock cannot be cleared, then 200 and the activation is recorded at once', async () => {
      const { userId, code } = await enrollWithCode();
      // The route's view of the throttle is narrower than the object the activation was given.
      jest.spyOn(service.services.users.throttle as ActivationThrottle, 'succeeded').mockRejectedValue(new Error('Connection is closed.'));
      jest.spyOn(service.services.repositories.signInFailures, 'clear').mockRejectedValue(new Error('MongoDB stepped down'));
      const res = await activate({ userId, activationCode: code });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: expect.stringMatching(/^[A-Z0-9]{6}$/) });
      expect(await statusOf(userId)).toBe('ACTIVE');
      expect(await recorded(userId)).toEqual(['user.activated', 'user.enrolled']);
      const logs = JSON.stringify(service.logLines());
      expect(logs).toContain('activation throttle not reset');
      expect(logs).toContain('sign-in lock not cleared');
    });

    test('when an admin re-issues a code and the activity record cannot be written, then 202, the new code is sent and the sweep records the re-issue once', async () => {
      const { userId, email, code: first } = await enrollWithCode();
      recordFailsFor(userId);
      jest.spyOn(service.services.users.throttle as ActivationThrottle, 'reset').mockRejectedValue(new Error('Connection is closed.'));

      const reissued = await fetch(`${service.url}/admin/users/${userId}/activation?comments=lost%20mail`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.config.adminToken}` },
      });
      expect(reissued.status).toBe(202);
      jest.restoreAllMocks();
      const code = (await messages(email, 2)).map((m) => codeIn(m.text)).find((c) => c !== first) ?? '';
      expect(code).toMatch(/^[A-Z0-9]+$/);

      expect(await recorded(userId)).toEqual(['user.enrolled']);
      for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps(), SOON_AFTER_GRACE());
      expect(await recorded(userId)).toEqual(['user.activation-reissued', 'user.enrolled']);
      expect((await activate({ userId, activationCode: code })).status).toBe(200);
    });
  });

  describe('blocked users', () => {
    const setBlocked = (userId: string, blocked: boolean) =>
      sendJson(`${service.url}/admin/users/${userId}/blocked`, 'PUT', service.config.adminToken, { blocked });
    const userOf = async (userId: string) =>
      (await (await fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<
        string,
        unknown
      >;
    // Equal but for the clock: two answers may straddle a second boundary.
    const withoutTime = async (res: Response) => ({ ...((await res.json()) as Record<string, unknown>), timestamp: 'same second' });

    test('when a blocked user sends the right code with a device key, then the answer is that of an unknown user and the user stays pending without the key', async () => {
      const userId = nextId();
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'BLOCKED-CODE' }))).status).toBe(
        201,
      );
      expect((await setBlocked(userId, true)).status).toBe(200);
      const attempt = { activationCode: 'BLOCKED-CODE', device: { deviceId: 'attacker-phone', publicKeyJwk: deviceKey() } };
      const blocked = await activate({ userId, ...attempt });
      const ghost = await activate({ userId: `ghost-${userId}`, ...attempt });
      expect(blocked.status).toBe(422);
      expect(ghost.status).toBe(blocked.status);
      expect(await withoutTime(blocked)).toEqual(await withoutTime(ghost));
      const user = await userOf(userId);
      expect(user).toMatchObject({ status: 'CREATED', blocked: true });
      expect(user.device).toBeUndefined();
    });

    test('when the block is stored while a right code is being checked, then the activation is refused like a wrong code and no key is stored', async () => {
      const userId = nextId();
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'RACED-CODE' }))).status).toBe(
        201,
      );
      // The activation reads the user (not blocked yet), then an admin's block is stored before its write.
      const users = service.services.repositories.users;
      const read = users.findActivationState;
      users.findActivationState = async (ref) => {
        users.findActivationState = read;
        const state = await read(ref);
        await users.setBlocked(ref, true, 'raced', new Date());
        return state;
      };
      try {
        const res = await activate({
          userId,
          activationCode: 'RACED-CODE',
          device: { deviceId: 'attacker-phone', publicKeyJwk: deviceKey() },
        });
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(wrong(99));
      } finally {
        users.findActivationState = read;
      }
      const user = await userOf(userId);
      expect(user).toMatchObject({ status: 'CREATED', blocked: true });
      expect(user.device).toBeUndefined();
    });

    test('when a user is blocked and unblocked, then the pending code stays ended until an admin re-issues one, which is refused while the user is blocked', async () => {
      const { userId, code, email } = await enrollWithCode();
      const blocked = await setBlocked(userId, true);
      expect(blocked.status).toBe(200);
      // The code expired at the moment of the block.
      const shown = (await blocked.json()) as { blockedAt: string; activation: { expiresAt: string } };
      expect(shown.activation.expiresAt).toBe(shown.blockedAt);
      const whileBlocked = await admin(`/admin/users/${userId}/activation`);
      expect(whileBlocked.status).toBe(409);
      expect(await whileBlocked.json()).toEqual(
        errorBody(409, 'Invalid data.', 'User is blocked; unblock the user before issuing a new code', `/admin/users/${userId}/activation`),
      );

      expect((await setBlocked(userId, false)).status).toBe(200);
      const old = await activate({ userId, activationCode: code });
      expect(old.status).toBe(410);
      expect(await old.json()).toEqual(errorBody(410, 'Gone', 'Activation code expired; ask for a new activation code', PATH));
      expect((await admin(`/admin/users/${userId}/activation`)).status).toBe(202);
      const newCode = (await messages(email, 2)).map((m) => codeIn(m.text)).find((c) => c !== code) as string;
      const ok = await activate({ userId, activationCode: newCode });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ userId, status: 'ACTIVE', verificationKey: expect.any(String) });
    });
  });

  test('when 20 wrong guesses race from one address, then only 6 are checked (5 free, 1 through the gate) and the right code from elsewhere still activates', async () => {
    const userId = nextId();
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { predefinedCode: 'RACE-CODE' }))).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 20 }, () => activate({ userId, activationCode: 'WRONG' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(6);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    const owner = await postJsonFrom('127.0.0.4', `${service.url}${PATH}`, { userId, activationCode: 'RACE-CODE' });
    expect(owner.status).toBe(200);
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
      const withPrivate = await activate({
        userId,
        activationCode: 'DEV-CODE',
        device: { deviceId: 'p', publicKeyJwk: { ...key, d: key.x } },
      });
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

describe('Activation limits: per address, X-Forwarded-For, and the 100-failure cap', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('usersactlimits', {
      RATE_LIMIT_ACTIVATE_PER_IP: '8',
      ACTIVATION_MAX_FAILURES: '4',
      ACTIVATION_FREE_FAILURES_PER_USER: '3',
      ACTIVATION_FREE_FAILURES_PER_ADDRESS: '50',
    });
  });
  afterAll(async () => {
    await service.close();
  });
  const activate = (userId: string, headers: Record<string, string> = {}) =>
    sendJson(`${service.url}${PATH}`, 'POST', undefined, { userId, activationCode: 'GUESS' }, headers);
  const limited = errorBody(
    429,
    'Too Many Requests',
    expect.stringMatching(/^Too many requests: retry after \d+ seconds$/) as unknown as string,
    PATH,
  );

  test('when one address tries more than its budget across userIds, even with made-up X-Forwarded-For headers, then 429', async () => {
    // TRUST_PROXY is off: the header is ignored and the socket address is counted.
    const left: (string | null)[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await activate(`spread-${i}`, { 'x-forwarded-for': `198.51.100.${i}` });
      expect(res.status).toBe(422);
      expect(res.headers.get('ratelimit-policy')).toBe('"activation-per-address";q=8;w=60');
      left.push(res.headers.get('ratelimit')?.replace(/;t=\d+$/, '') ?? null);
    }
    expect(left).toEqual([7, 6, 5, 4, 3, 2, 1, 0].map((r) => `"activation-per-address";r=${r}`));
    const res = await activate('spread-x', { 'x-forwarded-for': '198.51.100.200' });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('ratelimit')).toMatch(/^"activation-per-address";r=0;t=\d+$/);
    expect(await res.json()).toEqual(limited);
  });

  test('when a user has 4 consecutive wrong codes (the configured cap), then the code is void (423) for everyone until an admin re-issues', async () => {
    const token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    await createGroups(service, ['retail']);
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('capped', { predefinedCode: 'CAP-CODE' }))).status).toBe(201);
    const from = (address: string, activationCode: string) =>
      postJsonFrom(address, `${service.url}${PATH}`, { userId: 'capped', activationCode });
    // Spread over addresses (each has its own per-address budget of 8 requests).
    expect((await from('127.0.0.5', 'WRONG')).body).toEqual(wrong(3));
    expect((await from('127.0.0.5', 'WRONG')).body).toEqual(wrong(2));
    expect((await from('127.0.0.6', 'WRONG')).body).toEqual(wrong(1));
    expect((await from('127.0.0.6', 'WRONG')).body).toEqual(wrong(0));
    const right = await from('127.0.0.7', 'CAP-CODE');
    expect(right.status).toBe(423);
    expect(right.body).toEqual(locked);
    const reissued = await fetch(`${service.url}/admin/users/capped/activation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(reissued.status).toBe(202);
    expect((await from('127.0.0.7', 'CAP-CODE')).body).toEqual(wrong(3));
  });
});

describe('Activation behind one trusted proxy (TRUST_PROXY=1)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('usersactproxy', { TRUST_PROXY: '1', RATE_LIMIT_ACTIVATE_PER_IP: '3' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a caller varies the hops it writes before the proxy-added one, then the per-address limit still counts the proxy-added address', async () => {
    const activate = (spoofed: string) =>
      sendJson(
        `${service.url}${PATH}`,
        'POST',
        undefined,
        { userId: 'p', activationCode: 'GUESS' },
        { 'x-forwarded-for': `${spoofed}, 203.0.113.9` },
      );
    for (let i = 0; i < 3; i += 1) expect((await activate(`198.51.100.${i}`)).status).toBe(422);
    expect((await activate('198.51.100.77')).status).toBe(429);
    // Another real client address (as the proxy reports it) has its own budget.
    const other = await sendJson(
      `${service.url}${PATH}`,
      'POST',
      undefined,
      { userId: 'p', activationCode: 'GUESS' },
      { 'x-forwarded-for': '203.0.113.10' },
    );
    expect(other.status).toBe(422);
  });
});

/**
 * Callers behind one trusted proxy (TRUST_PROXY=1), each named by the address in
 * X-Forwarded-For: an IPv6 caller is its /64, which one host may send from any address of, for
 * the per-address budget and for the wrong codes of one user from one address (5 requests per
 * address and 2 free failures here, to keep the test short).
 */
describe('Activation from IPv6 callers behind one trusted proxy (TRUST_PROXY=1)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('usersactipv6', {
      TRUST_PROXY: '1',
      RATE_LIMIT_ACTIVATE_PER_IP: '5',
      ACTIVATION_FREE_FAILURES_PER_ADDRESS: '2',
      // No floor: the 4th guess must arrive within the 1-second wait the 3rd opened.
      ACTIVATION_FAILURE_FLOOR_MS: '0',
    });
  });
  afterAll(async () => {
    await service.close();
  });
  const activate = (address: string, userId: string, activationCode = 'GUESS') =>
    sendJson(`${service.url}${PATH}`, 'POST', undefined, { userId, activationCode }, { 'x-forwarded-for': address });

  test('when requests come from one IPv6 /64, each from another address of it, then they spend one per-address budget and the next /64 has its own', async () => {
    const statuses: number[] = [];
    for (const address of [
      '2001:db8:61:1::1',
      '2001:db8:61:1::2',
      '2001:db8:61:1:a:b:c:d',
      '2001:db8:61:1::4',
      '2001:db8:61:1::5',
      '2001:db8:61:1::6',
    ]) {
      statuses.push((await activate(address, `v6-spread-${statuses.length}`)).status);
    }
    expect(statuses).toEqual([422, 422, 422, 422, 422, 429]);
    expect((await activate('2001:db8:61:2::1', 'v6-spread-next')).status).toBe(422);
  });

  test('when requests come from an IPv4 address and from that address mapped into IPv6, then they spend one per-address budget', async () => {
    const statuses: number[] = [];
    for (const address of [
      '203.0.113.61',
      '::ffff:203.0.113.61',
      '203.0.113.61',
      '::ffff:203.0.113.61',
      '203.0.113.61',
      '::ffff:203.0.113.61',
    ]) {
      statuses.push((await activate(address, `v4-mapped-${statuses.length}`)).status);
    }
    expect(statuses).toEqual([422, 422, 422, 422, 422, 429]);
  });

  test("when a stranger guesses a user's code from several addresses of one IPv6 /64, then that /64 waits after its free failures while the right code from another /64 activates", async () => {
    const token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    await createGroups(service, ['retail']);
    const created = await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('v6-owner', { predefinedCode: 'V6-CODE' }));
    expect(created.status).toBe(201);
    // 2 free failures, the 3rd through the gate (which then stays shut 1 s), the 4th waits.
    const statuses: number[] = [];
    for (const address of ['2001:db8:62:1::1', '2001:db8:62:1::2', '2001:db8:62:1::3', '2001:db8:62:1::4']) {
      statuses.push((await activate(address, 'v6-owner', 'WRONG')).status);
    }
    expect(statuses).toEqual([422, 422, 422, 429]);
    const owner = await activate('2001:db8:62:2::1', 'v6-owner', 'V6-CODE');
    expect(owner.status).toBe(200);
  });
});
