import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registerClient } from '../../core/clients/clients.service.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { eventually, readOutbox } from '../support/otp-helpers.js';
import { csrfOf, FormWalker, loginCodeFor, loginCodesSettled, signInWithForms, type Page } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { recordRefusesWritesAbout } from '../support/record-failures.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { signInLockChangeChecks, signInLocked, signInUnlocked } from '../../core/sign-in/sign-in-lock-activity.js';
import { owedActivityEntry } from '../../core/users/owed-activity.js';
import type { ChangeAhead } from '../../core/users/users.repository.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const REDIRECT = 'https://app.example/callback';
const LOCKED_TEXT = 'Sign-in to this account is locked because of too many wrong codes in a row. Contact your administrator to unlock it.';
const alertOf = (page: Page) => /role="alert">([^<]+)</.exec(page.html)?.[1] ?? '';

/**
 * The service on a public URL of its own, a dispatch worker sending its codes, and the address where the Acme Bank client
 * (which signs in at REDIRECT) starts a sign-in.
 */
async function startSignInService(label: string, overrides: Record<string, string>) {
  const service = await startTestService(label, overrides, { ownPublicUrl: true });
  const worker = await startDispatchWorker(service.config, memoryLogger().logger);
  const { clientId } = (await registerClient(service.services.clients, { name: 'Acme Bank', scopes: [], redirectUris: [REDIRECT] })).client;
  const query = new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' });
  return {
    service,
    authorizeUrl: () => `${service.url}/svc/authserver/oauth/authorize?${query.toString()}`,
    stop: async () => {
      await worker.shutdown();
      await service.close();
    },
  };
}

/**
 * Sign-in throttling on the running service: budgets per (user, address) pair before the
 * per-user ones, addresses the user signed in from, and the cap on consecutive wrong codes
 * (7 here instead of 100, to keep the test short) with its admin unlock.
 */
describe('sign-in throttling: strangers, guessing and the lock', () => {
  let service: TestService;
  let authorizeUrl: () => string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ service, authorizeUrl, stop } = await startSignInService('signin-throttle', {
      RATE_LIMIT_LOGIN_PER_IP: '10000',
      LOGIN_MAX_FAILURES: '7',
      LOGIN_USER_STEP_FLOOR_MS: '0',
    }));
  });
  afterAll(() => stop());

  /** A new sign-in from `address`: the page after posting the user id. */
  async function postUserId(userId: string, address?: string): Promise<{ walker: FormWalker; page: Page }> {
    const walker = new FormWalker(service.url, address);
    const first = await walker.page(authorizeUrl());
    const page = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
    return { walker, page };
  }

  const postCode = (walker: FormWalker, page: Page, otp: string) =>
    walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp } });
  const resend = (walker: FormWalker, page: Page) => walker.page(page.url, { form: { csrf: csrfOf(page.html), step: 'resend' } });
  const loginMessages = async (to: string, since: Date) =>
    (await readOutbox(service, to)).filter((m) => new Date(m.createdAt) >= since && /sign-in code/.test(m.text));
  const other = (code: string) => (code === '000000' ? '111111' : '000000');
  const signIn = (userId: string, mobile: string, address?: string) =>
    signInWithForms(service, new FormWalker(service.url, address), authorizeUrl(), userId, mobile);
  const admin = (method: string, path: string) =>
    fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${service.config.adminToken}` } });
  /** The user's activity entries as [action, actor, comments], newest first. */
  const recordedFor = async (userId: string) =>
    ((await (await admin('GET', `/admin/activity?userId=${userId}`)).json()) as { activity: Record<string, unknown>[] }).activity.map(
      (e) => [e.action, e.actor, e.comments],
    );
  /** Two passes of the enrollment worker's owed-entry sweep, as after the grace period. */
  const sweepAfterGrace = async () => {
    const sweepDeps = {
      ...service.services.repositories,
      changeChecks: signInLockChangeChecks(service.services.repositories.signInFailures),
      logger: memoryLogger().logger,
      graceMs: service.config.sweeperGraceMs,
    };
    const afterGrace = new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps, afterGrace);
  };

  test("when a stranger posts a person's user id again and again from another address, then only that address is refused, at most 3 codes go out, and the person still gets a code from their own address", async () => {
    await insertUser(service.ctx.mongo, { userId: 'paula', mobileNumber: '+15550400001' });
    const since = new Date();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await postUserId('paula', '127.0.0.2')).page.status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(new URL(await signIn('paula', '+15550400001')).searchParams.get('code')).toBeTruthy();
    // 3 for the stranger, 1 for the person; no more arrive later.
    await eventually(async () => ((await loginMessages('+15550400001', since)).length >= 4 ? true : undefined));
    await loginCodesSettled(service, authorizeUrl());
    expect(await loginMessages('+15550400001', since)).toHaveLength(4);
  });

  test("when strangers from many addresses spend the user's code budget, then more addresses wait, the messages stay at 10 in all, and the person still signs in from an address they signed in from before", async () => {
    await insertUser(service.ctx.mongo, { userId: 'quinn', mobileNumber: '+15550400002' });
    const since = new Date();
    // The person's first sign-in: its code counts against the user's budget (the address was new).
    await signIn('quinn', '+15550400002');
    const statuses: number[] = [];
    for (const address of ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']) {
      for (let i = 0; i < 3; i += 1) statuses.push((await postUserId('quinn', address)).page.status);
    }
    expect(statuses).toEqual([...Array<number>(9).fill(200), 429, 429, 429]);
    const late = await postUserId('quinn', '127.0.0.7');
    expect(late.page.status).toBe(429);
    expect(Number(late.page.headers.get('retry-after'))).toBeGreaterThan(0);
    await eventually(async () => ((await loginMessages('+15550400002', since)).length >= 10 ? true : undefined));
    await loginCodesSettled(service, authorizeUrl());
    expect(await loginMessages('+15550400002', since)).toHaveLength(10);
    expect(new URL(await signIn('quinn', '+15550400002')).searchParams.get('code')).toBeTruthy();
  });

  test('when wrong codes go on across new codes, then the count is not reset and the 7th failure in a row locks sign-in: the right code, new codes and new sign-ins are refused with words that say to contact the administrator', async () => {
    await insertUser(service.ctx.mongo, { userId: 'rita', mobileNumber: '+15550400003' });
    let since = new Date();
    const { walker, page: codePage } = await postUserId('rita');
    const first = await loginCodeFor(service, '+15550400003', since);
    let page = codePage;
    for (let i = 0; i < 5; i += 1) page = await postCode(walker, page, other(first));
    expect(alertOf(page)).toBe('Too many wrong codes. Send a new code to try again.');
    since = new Date();
    page = await resend(walker, page);
    const second = await loginCodeFor(service, '+15550400003', since);
    page = await postCode(walker, page, other(second));
    expect(alertOf(page)).toBe('That code is not right. 4 attempts left.');
    page = await postCode(walker, page, other(second));
    expect(page.status).toBe(403);
    expect(page.html).toContain('Sign-in is locked');
    expect(page.html).toContain(LOCKED_TEXT);
    // The right code of the live code is refused now as well.
    const right = await postCode(walker, codePage, second);
    expect(right.status).toBe(403);
    expect(right.html).toContain(LOCKED_TEXT);
    // A new sign-in says so at once and sends nothing.
    since = new Date();
    const again = await postUserId('rita', '127.0.0.8');
    expect(again.page.status).toBe(403);
    expect(again.page.html).toContain(LOCKED_TEXT);
    await loginCodesSettled(service, authorizeUrl());
    expect(await loginMessages('+15550400003', since)).toEqual([]);
    const activity = await admin('GET', '/admin/activity?userId=rita');
    expect(((await activity.json()) as { activity: { action: string; comments?: string }[] }).activity).toEqual([
      expect.objectContaining({ action: 'user.sign-in-locked', actor: { type: 'user' }, comments: '7 consecutive wrong login codes' }),
    ]);
  });

  test('when an admin removes the sign-in lock, then the user signs in again and both lock and unlock are in the activity record', async () => {
    // rita is locked by the test above.
    expect((await admin('DELETE', '/admin/users/rita/sign-in-lock?comments=verified%20by%20phone')).status).toBe(204);
    expect(new URL(await signIn('rita', '+15550400003')).searchParams.get('code')).toBeTruthy();
    const activity = await admin('GET', '/admin/activity?userId=rita');
    expect(((await activity.json()) as { activity: { action: string }[] }).activity.map((a) => a.action)).toEqual([
      'user.sign-in-unlocked',
      'user.sign-in-locked',
    ]);
  });

  test('when the activity record cannot be written after an admin ends a sign-in lock, then the answer is the success and the entry appears exactly once after the sweep', async () => {
    const ref = { enterpriseId: 'default', userId: 'wes' };
    await insertUser(service.ctx.mongo, { userId: ref.userId, mobileNumber: '+15550400012' });
    const { signInFailures, activity } = service.services.repositories;
    await signInFailures.take(ref, 7, new Date());
    expect(await signInFailures.lock(ref, new Date())).toBe(true);
    const restore = recordRefusesWritesAbout(activity, ref.userId);
    try {
      expect((await admin('DELETE', '/admin/users/wes/sign-in-lock?comments=verified%20by%20phone')).status).toBe(204);
      // Again: nothing left to end, nothing more owed.
      expect((await admin('DELETE', '/admin/users/wes/sign-in-lock?comments=again')).status).toBe(204);
    } finally {
      restore();
    }
    expect(await signInFailures.isLocked(ref, 7)).toBe(false);
    const recorded = () => recordedFor('wes');
    expect(await recorded()).toEqual([]);

    await sweepAfterGrace();
    expect(await recorded()).toEqual([['user.sign-in-unlocked', { type: 'admin' }, 'verified by phone']]);
  });

  test('when a process died between storing a lock or unlock entry ahead and settling it, then the sweep records the changes that were made, once, and drops the others', async () => {
    const ref = { enterpriseId: 'default', userId: 'yara' };
    await insertUser(service.ctx.mongo, { userId: ref.userId, mobileNumber: '+15550400014' });
    const { signInFailures, users } = service.services.repositories;
    const entry = (action: 'user.sign-in-locked' | 'user.sign-in-unlocked', ahead: ChangeAhead) =>
      owedActivityEntry(action, action === 'user.sign-in-locked' ? { type: 'user' } : { type: 'admin' }, new Date(), action, { ahead });
    // A lock set, then its process died: its entry waits on the lock.
    const lockedAt = new Date();
    await signInFailures.take(ref, 7, lockedAt);
    expect(await signInFailures.lock(ref, lockedAt)).toBe(true);
    await users.oweActivity(ref, [
      entry('user.sign-in-locked', signInLocked(lockedAt)),
      // A lock whose process died before it was set, and an unlock of the lock in place that died before its clear.
      entry('user.sign-in-locked', signInLocked(new Date(lockedAt.getTime() - 1000))),
      entry('user.sign-in-unlocked', signInUnlocked(lockedAt)),
    ]);
    const sweepDeps = {
      users,
      activity: service.services.repositories.activity,
      changeChecks: signInLockChangeChecks(signInFailures),
      logger: memoryLogger().logger,
      graceMs: service.config.sweeperGraceMs,
    };
    const afterGrace = () => new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    await sweepOwedActivity(sweepDeps, afterGrace());
    const recorded = async () =>
      ((await (await admin('GET', '/admin/activity?userId=yara')).json()) as { activity: Record<string, unknown>[] }).activity.map(
        (e) => e.action,
      );
    expect(await recorded()).toEqual(['user.sign-in-locked']);
    expect(await users.findOwedActivity(ref)).toEqual([]);
    expect(await signInFailures.isLocked(ref, 7)).toBe(true);

    // A lock whose entry is still ahead when an admin ends it: both are recorded.
    await signInFailures.clear(ref);
    const second = new Date();
    await signInFailures.take(ref, 7, second);
    await signInFailures.lock(ref, second);
    await users.oweActivity(ref, [entry('user.sign-in-locked', signInLocked(second))]);
    expect((await admin('DELETE', '/admin/users/yara/sign-in-lock')).status).toBe(204);
    await sweepOwedActivity(sweepDeps, afterGrace());
    expect(await recorded()).toEqual(['user.sign-in-unlocked', 'user.sign-in-locked', 'user.sign-in-locked']);
    expect(await users.findOwedActivity(ref)).toEqual([]);
  });

  test('when an admin removes a sign-in lock that is not there, then the answer is still 204 and nothing is recorded', async () => {
    await insertUser(service.ctx.mongo, { userId: 'never-locked', mobileNumber: '+15550400011' });
    expect((await admin('DELETE', '/admin/users/never-locked/sign-in-lock?comments=just%20in%20case')).status).toBe(204);
    const activity = await admin('GET', '/admin/activity?userId=never-locked');
    expect(((await activity.json()) as { activity: unknown[] }).activity).toEqual([]);
  });

  test('when the unlock route names an unknown or odd user id, another enterprise, a bad enterpriseId, or has no admin token, then 404, 404, 422 and 401', async () => {
    expect((await admin('DELETE', '/admin/users/nobody-at-all/sign-in-lock')).status).toBe(404);
    expect((await admin('DELETE', '/admin/users/rita/sign-in-lock?enterpriseId=other-bank')).status).toBe(404);
    expect((await admin('DELETE', '/admin/users/rita/sign-in-lock?enterpriseId=bad%20id')).status).toBe(422);
    expect((await fetch(`${service.url}/admin/users/rita/sign-in-lock`, { method: 'DELETE' })).status).toBe(401);
    // Odd but well-encoded user ids are simply not found; a repeated enterpriseId is invalid.
    for (const id of ['x'.repeat(300), '%F0%9F%98%80', '..%2F..', 'rita%00']) {
      expect((await admin('DELETE', `/admin/users/${id}/sign-in-lock`)).status).toBe(404);
    }
    expect((await admin('DELETE', '/admin/users/rita/sign-in-lock?enterpriseId=a&enterpriseId=b')).status).toBe(422);
  });

  test('when a right code follows wrong ones, then the count starts over', async () => {
    await insertUser(service.ctx.mongo, { userId: 'sam', mobileNumber: '+15550400004' });
    for (let round = 0; round < 2; round += 1) {
      const since = new Date();
      const { walker, page: codePage } = await postUserId('sam');
      const code = await loginCodeFor(service, '+15550400004', since);
      let page = codePage;
      for (let i = 0; i < 4; i += 1) page = await postCode(walker, page, other(code));
      const done = await walker.request(page.url, { form: { csrf: csrfOf(page.html), step: 'code', otp: code } });
      // 8 failures in all, but never 7 in a row.
      expect(done).toEqual({ redirectedTo: expect.stringContaining(REDIRECT) as unknown });
    }
  });

  /** Seven wrong codes in a row over two codes, through the pages: the user's sign-in ends locked. */
  async function lockByWrongCodes(userId: string, mobile: string): Promise<void> {
    let since = new Date();
    const { walker, page: codePage } = await postUserId(userId);
    const first = await loginCodeFor(service, mobile, since);
    let page = codePage;
    for (let i = 0; i < 5; i += 1) page = await postCode(walker, page, other(first));
    since = new Date();
    page = await resend(walker, page);
    const second = await loginCodeFor(service, mobile, since);
    for (let i = 0; i < 2; i += 1) page = await postCode(walker, page, other(second));
    expect(page.html).toContain(LOCKED_TEXT);
  }

  test('when a locked user completes activation again, then sign-in is unlocked and the unlock is recorded', async () => {
    await createGroups(service, ['retail']);
    const token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
    const enrolled = await sendJson(
      `${service.url}/v1/users`,
      'POST',
      token,
      userBody('uma', { mobileNumber: '+15550400006', predefinedCode: 'RIGHT-CODE' }),
    );
    expect(enrolled.status).toBe(201);
    await lockByWrongCodes('uma', '+15550400006');
    const activated = await sendJson(`${service.url}/v1/users/activate`, 'POST', undefined, {
      userId: 'uma',
      activationCode: 'RIGHT-CODE',
    });
    expect(activated.status).toBe(200);
    expect(new URL(await signIn('uma', '+15550400006')).searchParams.get('code')).toBeTruthy();
    const activity = await admin('GET', '/admin/activity?userId=uma');
    expect(((await activity.json()) as { activity: unknown[] }).activity.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'user.sign-in-unlocked', actor: { type: 'user' }, comments: 'activation completed' }),
      expect.objectContaining({ action: 'user.activated' }),
    ]);
  });

  test('when the operator runs `users unlock-sign-in` of the admin CLI, then the user signs in again and the unlock is recorded', async () => {
    await insertUser(service.ctx.mongo, { userId: 'vera', mobileNumber: '+15550400007' });
    await lockByWrongCodes('vera', '+15550400007');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(projectRoot, 'dist', 'scripts', 'admin-cli.js'), 'users', 'unlock-sign-in', 'vera', '--comments', 'ticket 42'],
      { env: { ...process.env, MONGODB_URI: service.config.mongodbUri } },
    );
    expect(JSON.parse(stdout)).toEqual({ enterpriseId: 'default', userId: 'vera', wasLocked: true });
    expect(new URL(await signIn('vera', '+15550400007')).searchParams.get('code')).toBeTruthy();
    const activity = await admin('GET', '/admin/activity?userId=vera');
    expect(((await activity.json()) as { activity: unknown[] }).activity[0]).toEqual(
      expect.objectContaining({ action: 'user.sign-in-unlocked', actor: { type: 'admin' }, comments: 'ticket 42' }),
    );
  });

  test('when the activity record cannot be written after wrong codes lock sign-in, then the locked page is the answer and the entry appears exactly once after the sweep', async () => {
    await insertUser(service.ctx.mongo, { userId: 'xena', mobileNumber: '+15550400013' });
    const restore = recordRefusesWritesAbout(service.services.repositories.activity, 'xena');
    try {
      await lockByWrongCodes('xena', '+15550400013');
    } finally {
      restore();
    }
    const recorded = () => recordedFor('xena');
    expect(await recorded()).toEqual([]);
    await sweepAfterGrace();
    expect(await recorded()).toEqual([['user.sign-in-locked', { type: 'user' }, '7 consecutive wrong login codes']]);
  });

  test('when an unknown user id gets 7 wrong codes in a row, then it is locked with the same page as a real user (a lock tells nothing about existence)', async () => {
    const { walker, page: codePage } = await postUserId('nobody-locked');
    let page = codePage;
    for (let i = 0; i < 5; i += 1) page = await postCode(walker, page, '123456');
    expect(alertOf(page)).toBe('Too many wrong codes. Send a new code to try again.');
    page = await resend(walker, page);
    page = await postCode(walker, page, '123456');
    expect(alertOf(page)).toBe('That code is not right. 4 attempts left.');
    page = await postCode(walker, page, '123456');
    expect(page.status).toBe(403);
    expect(page.html).toContain(LOCKED_TEXT);
    expect((await postUserId('nobody-locked', '127.0.0.9')).page.html).toContain(LOCKED_TEXT);
  });

  test('when 20 wrong codes race over several sign-ins of one user, then no more than 7 are checked', async () => {
    await insertUser(service.ctx.mongo, { userId: 'tom', mobileNumber: '+15550400005' });
    const sessions = await Promise.all(['127.0.0.10', '127.0.0.11', '127.0.0.12'].map((address) => postUserId('tom', address)));
    const pages = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const { walker, page } = sessions[i % 3] as { walker: FormWalker; page: Page };
        return postCode(walker, page, '000000');
      }),
    );
    expect(pages.every((p) => p.status === 400 || p.status === 403)).toBe(true);
    const failures = await service.ctx.mongo.collection('sign_in_failures').findOne({ userId: 'tom' });
    expect(failures?.failures).toBe(7);
    const otps = await service.ctx.mongo.collection('otps').find({ userId: 'tom' }).toArray();
    expect(otps.reduce((sum, otp) => sum + Number(otp.attemptsUsed ?? 0), 0)).toBeLessThanOrEqual(7);
  });
});

/**
 * Callers behind one trusted proxy (TRUST_PROXY=1), each named by the address in
 * X-Forwarded-For: an IPv6 caller is its /64, which one host may send from any address of, for
 * every sign-in budget and for the addresses a user signed in from (5 forms per address per
 * minute here, instead of 60, to keep the test short).
 */
describe('sign-in throttling: an IPv6 /64 is one caller', () => {
  let service: TestService;
  let authorizeUrl: () => string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ service, authorizeUrl, stop } = await startSignInService('signin-ipv6', {
      TRUST_PROXY: '1',
      RATE_LIMIT_LOGIN_PER_IP: '5',
      LOGIN_USER_STEP_FLOOR_MS: '0',
    }));
  });
  afterAll(() => stop());

  /** A new sign-in from `address` (as the proxy reports it): the status after posting the user id. */
  async function postUserId(userId: string, address: string): Promise<number> {
    const walker = new FormWalker(service.url, { forwardedFor: address });
    const first = await walker.page(authorizeUrl());
    return (await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } })).status;
  }
  const signIn = (userId: string, mobile: string, address: string) =>
    signInWithForms(service, new FormWalker(service.url, { forwardedFor: address }), authorizeUrl(), userId, mobile);

  test('when forms come from one IPv6 /64, each from another address of it, then they spend one per-address budget and the next /64 has its own', async () => {
    const statuses: number[] = [];
    for (const address of [
      '2001:db8:51:1::1',
      '2001:db8:51:1::2',
      '2001:db8:51:1:a:b:c:d',
      '2001:db8:51:1::4',
      '2001:db8:51:1::5',
      '2001:db8:51:1::6',
    ]) {
      statuses.push(await postUserId(`v6-form-${statuses.length}`, address));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await postUserId('v6-form-next', '2001:db8:51:2::1')).toBe(200);
  });

  test("when a stranger posts a person's user id from several addresses of one IPv6 /64, then that /64 is refused after 3 codes and the person still signs in from another /64", async () => {
    await insertUser(service.ctx.mongo, { userId: 'v6-paula', mobileNumber: '+15550410001' });
    const statuses: number[] = [];
    for (const address of ['2001:db8:52:1::1', '2001:db8:52:1::2', '2001:db8:52:1::3', '2001:db8:52:1:ffff:ffff:ffff:ffff']) {
      statuses.push(await postUserId('v6-paula', address));
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(new URL(await signIn('v6-paula', '+15550410001', '2001:db8:52:2::1')).searchParams.get('code')).toBeTruthy();
  });

  test("when a person signed in from one address of an IPv6 /64 and strangers spent the user's code budget, then another address of that /64 is still the person's, and the next /64 is not", async () => {
    await insertUser(service.ctx.mongo, { userId: 'v6-quinn', mobileNumber: '+15550410002' });
    // The person's first sign-in: its code counts against the user's budget (the /64 was new).
    await signIn('v6-quinn', '+15550410002', '2001:db8:53:1::1');
    const statuses: number[] = [];
    for (const block of ['2001:db8:54:1', '2001:db8:54:2', '2001:db8:54:3', '2001:db8:54:4']) {
      for (let i = 1; i <= 3; i += 1) statuses.push(await postUserId('v6-quinn', `${block}::${i}`));
    }
    expect(statuses).toEqual([...Array<number>(9).fill(200), 429, 429, 429]);
    expect(await postUserId('v6-quinn', '2001:db8:53:2::1')).toBe(429);
    // A privacy address (RFC 8981) of the same /64, as the person's device picks a new one each day.
    expect(new URL(await signIn('v6-quinn', '+15550410002', '2001:db8:53:1:9e4f:21ff:fe00:7')).searchParams.get('code')).toBeTruthy();
  });
});
