import { createClientWithToken } from '../support/auth-helpers.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { recordRefusesWritesAbout } from '../support/record-failures.js';
import { otpBody } from '../support/otp-helpers.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

interface Page {
  users: Record<string, unknown>[];
  next?: string;
}

describe('GET /v1/users and PATCH /v1/users/{userId}', () => {
  let service: TestService;
  let token: string;
  let clientId: string;
  let otherToken: string;
  let n = 0;
  const nextId = (label = 'u') => `${label}${++n}`;

  beforeAll(async () => {
    service = await startTestService('userslist');
    await createGroups(service, ['retail', 'branch-a', 'vip']);
    ({ accessToken: token, clientId } = await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'acme' }));
    otherToken = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'globex' })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const list = async (query = '', bearer = token) => {
    const res = await fetch(`${service.url}/v1/users${query}`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: res.status, body: (await res.json()) as Page & Record<string, unknown> };
  };
  const patch = (userId: string, body: unknown, bearer = token) => sendJson(`${service.url}/v1/users/${userId}`, 'PATCH', bearer, body);
  const enroll = async (body: Record<string, unknown>, bearer = token) => {
    const res = await sendJson(`${service.url}/v1/users`, 'POST', bearer, body);
    expect(res.status).toBe(201);
  };
  const adminActivity = async (userId: string) => {
    const res = await fetch(`${service.url}/admin/activity?enterpriseId=acme&userId=${userId}`, {
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    return ((await res.json()) as { activity: Record<string, unknown>[] }).activity;
  };

  describe('GET /v1/users', () => {
    const group = 'vip';
    const listed: string[] = [];
    beforeAll(async () => {
      // Five users of acme created in the same millisecond: the userId breaks the tie.
      const at = new Date('2026-01-02T03:04:05.000Z');
      for (const userId of ['list-c', 'list-a', 'list-e', 'list-b', 'list-d']) {
        await insertUser(service.ctx.mongo, {
          userId,
          enterpriseId: 'acme',
          secondaryGroups: [group],
          status: userId === 'list-d' ? 'DELETED' : 'ACTIVE',
          createdAt: at,
          updatedAt: at,
        });
      }
      await insertUser(service.ctx.mongo, {
        userId: 'list-0',
        enterpriseId: 'acme',
        primaryGroup: group,
        createdAt: new Date('2026-01-01T00:00:00Z'),
      });
      await insertUser(service.ctx.mongo, { userId: 'list-x', enterpriseId: 'globex', secondaryGroups: [group], createdAt: at });
      listed.push('list-0', 'list-a', 'list-b', 'list-c', 'list-d', 'list-e');
    });

    test('when pages of 2 are walked with next, then every user of the group comes once, oldest first, userId breaking ties', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { status, body } = await list(`?group=${group}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(status).toBe(200);
        expect(body.users.length).toBeLessThanOrEqual(2);
        seen.push(...body.users.map((u) => u.userId as string));
        cursor = body.next;
        pages += 1;
      } while (cursor !== undefined);
      expect(seen).toEqual(listed);
      expect(pages).toBe(3);
    });

    test('when filtered by status, then only users in it are listed', async () => {
      const { body } = await list(`?group=${group}&status=DELETED`);
      expect(body.users.map((u) => u.userId)).toEqual(['list-d']);
      expect(body).not.toHaveProperty('next');
    });

    test("when a client lists, then another enterprise's users never appear and no secrets are shown", async () => {
      const userId = nextId('secret');
      await enroll(userBody(userId, { predefinedCode: 'ABCD1234', predefinedVerKey: 'KEY123' }));
      const { body } = await list('?limit=200');
      const ids = body.users.map((u) => u.userId);
      expect(ids).toContain(userId);
      expect(ids).not.toContain('list-x');
      const text = JSON.stringify(body);
      for (const secret of ['ABCD1234', 'KEY123', 'codeDigest', 'verificationKeyEncrypted', 'clientId', 'liveMobileKey']) {
        expect(text).not.toContain(secret);
      }
      expect(body.users.find((u) => u.userId === userId)).toMatchObject({
        status: 'CREATED',
        activation: { attemptsLeft: expect.any(Number) },
      });
      const other = await list(`?group=${group}`, otherToken);
      expect(other.body.users.map((u) => u.userId)).toEqual(['list-x']);
    });

    test('when limit, cursor, status or group is malformed, then 422 names it', async () => {
      const invalid = (name: string) => errorBody(422, 'Invalid data.', `[Invalid field ${name}]`, '/v1/users');
      for (const [query, field] of [
        ['?limit=0', 'limit'],
        ['?limit=201', 'limit'],
        ['?limit=abc', 'limit'],
        ['?limit=1&limit=2', 'limit'],
        ['?cursor=nonsense', 'cursor'],
        [`?cursor=u1.${Buffer.from('["x","y"]').toString('base64url')}`, 'cursor'],
        ['?status=GONE', 'status'],
        ['?group=a,b', 'group'],
      ]) {
        const { status, body } = await list(query);
        expect([query, status, body]).toEqual([query, 422, invalid(field as string)]);
      }
      const { body } = await list('?limit=200');
      expect(body.users.length).toBeLessThanOrEqual(200);
      expect((await list('')).status).toBe(200);
    });

    test('when the token is missing or lacks the users scope, then 401 / 403', async () => {
      expect((await fetch(`${service.url}/v1/users`)).status).toBe(401);
      const otpOnly = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
      expect((await list('', otpOnly)).status).toBe(403);
    });
  });

  describe('PATCH /v1/users/{userId}', () => {
    const path = (userId: string) => `/v1/users/${userId}`;
    const conflict = (userId: string, message: string, extra: Record<string, unknown> = {}) =>
      errorBody(409, 'Invalid data.', message, path(userId), extra);

    test('when names, contacts and groups are changed, then 200 shows them normalised as at enrollment and the change is recorded', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId, { mobileNumber: uniqueMobile() }));
      const mobile = uniqueMobile();
      const res = await patch(userId, {
        firstName: 'Alicia',
        lastName: 'Martin',
        emailId: 'alicia@example.com',
        mobileNumber: mobile,
        primaryGroup: 'branch-a',
        secondaryGroups: ' vip , ,retail,vip',
        comments: 'name corrected',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        userId,
        firstName: 'Alicia',
        lastName: 'Martin',
        emailId: 'alicia@example.com',
        mobileNumber: mobile,
        primaryGroup: 'branch-a',
        secondaryGroups: 'vip,retail',
      });
      const read = (await (
        await fetch(`${service.url}${path(userId)}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Record<string, unknown>;
      expect(read).toMatchObject({ firstName: 'Alicia', mobileNumber: mobile, secondaryGroups: 'vip,retail' });
      expect((await adminActivity(userId)).map((e) => [e.action, e.comments, e.actor])).toEqual([
        ['user.updated', 'name corrected', { type: 'client', clientId }],
        ['user.enrolled', undefined, { type: 'client', clientId }],
      ]);
    });

    test('when a patch changes nothing, then 200 and nothing is recorded', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId, { firstName: 'Same' }));
      const res = await patch(userId, { firstName: 'Same' });
      expect(res.status).toBe(200);
      expect((await adminActivity(userId)).map((e) => e.action)).toEqual(['user.enrolled']);
    });

    test('when a contact is removed with null, then it is gone, but the last one cannot be removed', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId, { mobileNumber: uniqueMobile() }));
      const removed = await patch(userId, { mobileNumber: null });
      expect(removed.status).toBe(200);
      expect(await removed.json()).not.toHaveProperty('mobileNumber');
      const last = await patch(userId, { emailId: null });
      expect(last.status).toBe(422);
      expect(await last.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field emailId]', path(userId)));
    });

    test('when a field breaks enrollment rules, then 422 names the first one in the contract order', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId));
      for (const [body, field] of [
        [{ mobileNumber: '12', firstName: '' }, 'firstName'],
        [{ emailId: 'not-an-email' }, 'emailId'],
        [{ mobileNumber: '+12' }, 'mobileNumber'],
        [{ lastName: 'x'.repeat(101) }, 'lastName'],
        [{ userId: 'renamed' }, 'userId'],
        [{ status: 'ACTIVE' }, 'status'],
        [{ firstName: null }, 'firstName'],
      ] as const) {
        const res = await patch(userId, body);
        expect([body, res.status, await res.json()]).toEqual([
          body,
          422,
          errorBody(422, 'Invalid data.', `[Invalid field ${field}]`, path(userId)),
        ]);
      }
      const empty = await patch(userId, {});
      expect(empty.status).toBe(422);
      expect((await patch(userId, '[1]')).status).toBe(400);
    });

    test('when groups or the mobile number break the business rules, then 409 with the enrollment messages', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId, { secondaryGroups: 'vip' }));
      const same = await patch(userId, { primaryGroup: 'vip' });
      expect(await same.json()).toEqual(conflict(userId, 'Primary and secondary group name cannot be same.'));
      const missing = await patch(userId, { secondaryGroups: 'vip,nowhere' });
      expect(await missing.json()).toEqual(conflict(userId, 'The group name : nowhere does not exist in the system.'));
      const holder = nextId('p');
      const mobile = uniqueMobile();
      await enroll(userBody(holder, { mobileNumber: mobile }));
      const held = await patch(userId, { mobileNumber: mobile });
      expect(held.status).toBe(409);
      expect(await held.json()).toEqual(conflict(userId, 'Mobile number already registered'));
      // The holder may "change" to its own number.
      expect((await patch(holder, { mobileNumber: mobile, firstName: 'Holder' })).status).toBe(200);
    });

    test("when the mobile number is another user's with or without the leading '+', then 409 Mobile number already registered; the holder may change to its own number spelt the other way, and the answer shows it as sent", async () => {
      const userId = nextId('p');
      await enroll(userBody(userId));
      const holder = nextId('p');
      const mobile = uniqueMobile();
      await enroll(userBody(holder, { mobileNumber: mobile.slice(1) }));
      const held = await patch(userId, { mobileNumber: mobile });
      expect(held.status).toBe(409);
      expect(await held.json()).toEqual(conflict(userId, 'Mobile number already registered'));
      const own = await patch(holder, { mobileNumber: mobile });
      expect(own.status).toBe(200);
      expect(await own.json()).toMatchObject({ userId: holder, mobileNumber: mobile });
      const back = await patch(userId, { mobileNumber: mobile.slice(1) });
      expect(back.status).toBe(409);
      expect(await back.json()).toEqual(conflict(userId, 'Mobile number already registered'));
    });

    test("when the user is DELETED, then 409 User is DELETED; unknown or another enterprise's user is 404", async () => {
      const userId = nextId('p');
      await enroll(userBody(userId));
      expect(
        (await fetch(`${service.url}${path(userId)}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(204);
      const res = await patch(userId, { firstName: 'Zombie' });
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(conflict(userId, 'User is DELETED', { userStatus: 'DELETED' }));
      const foreign = await patch(userId, { firstName: 'Other' }, otherToken);
      expect(foreign.status).toBe(404);
      expect(await foreign.json()).toEqual(errorBody(404, 'Not Found', 'User not found', path(userId)));
      expect((await patch('nobody-here', { firstName: 'X' })).status).toBe(404);
    });

    test('when patches race, then each applies to the state the others left and every change is recorded', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId, { secondaryGroups: 'vip' }));
      // Two patches that are each valid alone but not together: branch-a primary with secondaries vip,branch-a.
      const answers = await Promise.all([
        patch(userId, { primaryGroup: 'branch-a' }),
        patch(userId, { secondaryGroups: 'vip,branch-a' }),
        patch(userId, { firstName: 'Racer' }),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 409]);
      const user = (await (
        await fetch(`${service.url}${path(userId)}`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Record<string, string>;
      expect(user.firstName).toBe('Racer');
      expect(user.secondaryGroups.split(',')).not.toContain(user.primaryGroup);
      expect((await adminActivity(userId)).filter((e) => e.action === 'user.updated')).toHaveLength(2);
    });

    test('when the activity record cannot be written after a patch, then the answer is the success and the entry appears exactly once after the sweep', async () => {
      const userId = nextId('p');
      await enroll(userBody(userId));
      const restore = recordRefusesWritesAbout(service.services.repositories.activity, userId);
      try {
        const res = await patch(userId, { firstName: 'Kept', comments: 'maker: ann' });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ userId, firstName: 'Kept' });
      } finally {
        restore();
      }
      const changedAt = (await service.services.repositories.users.findUser({ enterpriseId: 'acme', userId }))?.updatedAt.toISOString();
      // The same patch again changes nothing, so it owes nothing either.
      expect((await patch(userId, { firstName: 'Kept', comments: 'maker: ann' })).status).toBe(200);
      expect((await adminActivity(userId)).map((e) => e.action)).toEqual(['user.enrolled']);

      const sweepDeps = { ...service.services.repositories, logger: memoryLogger().logger, graceMs: service.config.sweeperGraceMs };
      const afterGrace = new Date(Date.now() + service.config.sweeperGraceMs + 1000);
      for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps, afterGrace);
      expect((await adminActivity(userId)).map((e) => [e.action, e.comments, e.actor, e.at])).toEqual([
        ['user.updated', 'maker: ann', { type: 'client', clientId }, changedAt],
        ['user.enrolled', undefined, { type: 'client', clientId }, expect.any(String)],
      ]);
    });

    test('when two users race for one mobile number, then exactly one gets it', async () => {
      const a = nextId('p');
      const b = nextId('p');
      await enroll(userBody(a));
      await enroll(userBody(b));
      const mobile = uniqueMobile();
      const answers = await Promise.all([patch(a, { mobileNumber: mobile }), patch(b, { mobileNumber: mobile })]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    });
  });

  describe('blocked users', () => {
    const admin = (method: string, url: string, body?: unknown) =>
      sendJson(`${service.url}${url}`, method, service.config.adminToken, body);
    const userPath = (userId: string) => `${service.url}/v1/users/${userId}`;
    const bearer = () => ({ authorization: `Bearer ${token}` });

    test('when an admin blocked a user, then the enterprise still sees, changes and deletes the user, while OTPs for the user are 404', async () => {
      const userId = nextId('b');
      await enroll(userBody(userId));
      expect((await admin('PUT', `/admin/users/${userId}/blocked?enterpriseId=acme`, { blocked: true, reason: 'lost phone' })).status).toBe(
        200,
      );

      const shown = await fetch(userPath(userId), { headers: bearer() });
      expect(shown.status).toBe(200);
      expect(await shown.json()).toMatchObject({ userId, blocked: true, blockedReason: 'lost phone' });
      const { body } = await list('?limit=100');
      expect(body.users.find((u) => u.userId === userId)).toMatchObject({ blocked: true });

      const changed = await patch(userId, { firstName: 'Blocked' });
      expect(changed.status).toBe(200);
      expect(await changed.json()).toMatchObject({ firstName: 'Blocked', blocked: true });

      const otpToken = (await createClientWithToken(service, { scopes: ['otp'], enterpriseId: 'acme' })).accessToken;
      const otp = await sendJson(`${service.url}/v1/svc-otp`, 'POST', otpToken, otpBody(userId));
      expect(otp.status).toBe(404);
      expect(await otp.json()).toMatchObject({ message: 'User not found' });

      const deleted = await fetch(userPath(userId), { method: 'DELETE', headers: bearer() });
      expect(deleted.status).toBe(204);
      const after = await fetch(userPath(userId), { headers: bearer() });
      expect(await after.json()).toMatchObject({ userId, status: 'DELETED' });
    });
  });
});
