import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { buildApp } from '../../api/app.js';
import { Types } from 'mongoose';
import { userModel } from '../../core/users/users.repository.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, ipRefused, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

const invalidField = (name: string) => errorBody(422, 'Invalid data.', `[Invalid field ${name}]`, '/v1/users');
const conflict = (message: string, extra: Record<string, unknown> = {}) => errorBody(409, 'Invalid data.', message, '/v1/users', extra);

describe('POST /v1/users', () => {
  let service: TestService;
  let token: string;
  let n = 0;
  const nextId = () => `user${++n}`;

  beforeAll(async () => {
    service = await startTestService('usersenroll');
    await createGroups(service, ['retail', 'branch-a', 'vip']);
    token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const enroll = (body: unknown, headers: Record<string, string> = {}, bearer: string | null = token) =>
    sendJson(`${service.url}/v1/users`, 'POST', bearer ?? undefined, body, headers);
  const getUser = (userId: string) => fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } });

  async function expectCreated(body: Record<string, unknown>): Promise<void> {
    const res = await enroll(body);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/users/${String(body.userId)}`);
    expect(await res.text()).toBe('');
  }

  describe('success', () => {
    test('when a valid user is enrolled, then 201 with an empty body and Location /v1/users/<userId>', async () => {
      await expectCreated(
        userBody('alice.smith@corp-1_x', {
          emailId: 'alice@example.com',
          secondaryGroups: ' branch-a , ,vip,',
          mobileNumber: uniqueMobile(),
        }),
      );
    });

    test('when no preferredStatus is given, then the user is stored CREATED with defaults for loginId and sourceType', async () => {
      const userId = nextId();
      await expectCreated(userBody(userId, { comments: 'maker: bob' }));
      const res = await getUser(userId);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({
        userId,
        loginId: userId,
        primaryGroup: 'retail',
        secondaryGroups: '',
        firstName: 'Ada',
        lastName: 'Lovelace',
        emailId: `${userId}@example.com`,
        status: 'CREATED',
        sourceType: 'SVC',
        comments: 'maker: bob',
        activation: { expiresAt: expect.any(String), attemptsLeft: 100, locked: false },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const ttl = Date.parse((body.activation as { expiresAt: string }).expiresAt) - Date.parse(body.createdAt as string);
      expect(ttl).toBe(7 * 24 * 3600 * 1000);
    });

    test('when preferredStatus is ONBOARDING, then the user is stored ONBOARDING', async () => {
      const userId = nextId();
      await expectCreated(userBody(userId, { preferredStatus: 'ONBOARDING', sourceType: 'SVC-AD', loginId: 'ada.l' }));
      expect(await (await getUser(userId)).json()).toMatchObject({ status: 'ONBOARDING', sourceType: 'SVC-AD', loginId: 'ada.l' });
    });

    test('when secondary groups have blanks and empty items, then they are trimmed and dropped', async () => {
      const userId = nextId();
      await expectCreated(userBody(userId, { secondaryGroups: ' branch-a , ,vip,' }));
      expect(await (await getUser(userId)).json()).toMatchObject({ secondaryGroups: 'branch-a,vip' });
    });

    test('when a predefined code and verification key are given, then only their HMAC / ciphertext is stored and GET shows neither', async () => {
      const userId = nextId();
      await expectCreated(userBody(userId, { predefinedCode: 'SECRET-CODE-42', predefinedVerKey: 'VERKEY-77' }));
      const stored = await (await userModel(service.ctx.mongo)).findOne({ userId }).lean();
      const text = JSON.stringify(stored);
      expect(text).not.toContain('SECRET-CODE-42');
      expect(text).not.toContain('VERKEY-77');
      const got = await (await getUser(userId)).text();
      expect(got).not.toContain('SECRET-CODE-42');
      expect(got).not.toContain('VERKEY-77');
      expect(got).not.toMatch(/codeDigest|verificationKey|clientId/);
    });

    test('when a user is enrolled, then the stored document holds the user and its derived key, each field of its type, nothing null', async () => {
      const userId = nextId();
      const mobileNumber = uniqueMobile();
      await expectCreated(userBody(userId, { mobileNumber, secondaryGroups: 'vip', comments: 'import 7' }));
      const stored = (await (await userModel(service.ctx.mongo)).collection.findOne({ userId })) as Record<string, unknown>;
      expect(Object.keys(stored).sort()).toEqual(
        [
          '_id',
          'activation',
          'clientId',
          'comments',
          'createdAt',
          'emailId',
          'enterpriseId',
          'firstName',
          'lastName',
          'liveMobileKey',
          'loginId',
          'mobileNumber',
          'primaryGroup',
          'secondaryGroups',
          'sourceType',
          'status',
          'updatedAt',
          'userId',
        ].sort(),
      );
      expect(Object.values(stored)).not.toContain(null);
      expect(stored).toMatchObject({ secondaryGroups: ['vip'], liveMobileKey: `default:${mobileNumber}`, comments: 'import 7' });
      expect(stored._id).toBeInstanceOf(Types.ObjectId);
      expect(stored.createdAt).toBeInstanceOf(Date);
      expect(stored.updatedAt).toEqual(stored.createdAt);
      const activation = stored.activation as Record<string, unknown>;
      expect(Object.keys(activation).sort()).toEqual(['codeDigest', 'codeEncrypted', 'expiresAt', 'issue', 'verificationKeyEncrypted']);
      expect(activation.expiresAt).toBeInstanceOf(Date);
    });

    test('when a predefined code is given without any address, then the user is enrolled (nothing to send)', async () => {
      const { emailId: _ignored, ...body } = userBody(nextId(), { predefinedCode: 'ABCD2345' });
      await expectCreated(body);
    });

    test('when only a mobile number is given, then the user is enrolled (emailId is optional)', async () => {
      const { emailId: _ignored, ...body } = userBody(nextId(), { mobileNumber: uniqueMobile() });
      await expectCreated(body);
    });
    test('when a user id is an e-mail address, then request log lines show only a hint of it', async () => {
      const userId = `mask.${nextId()}@example.com`;
      expect((await enroll(userBody(userId, { emailId: userId }))).status).toBe(201);
      const read = await fetch(`${service.url}/v1/users/${encodeURIComponent(userId)}`, { headers: { authorization: `Bearer ${token}` } });
      expect(read.status).toBe(200);
      const lines = service.logLines().filter((line) => (line.req as { path?: string } | undefined)?.path?.startsWith('/v1/users/m***@'));
      expect(lines.length).toBeGreaterThan(0);
      expect(JSON.stringify(service.logLines())).not.toContain(userId.split('@')[0]);
    });
  });

  describe('every documented error, one row each', () => {
    test('when the user already exists, then 409 User is <status> with userStatus, for CREATED, ACTIVE and DELETED alike', async () => {
      for (const status of ['CREATED', 'ACTIVE', 'DELETED', 'ONBOARDING'] as const) {
        const userId = nextId();
        await insertUser(service.ctx.mongo, { userId, status });
        const res = await enroll(userBody(userId));
        expect(res.status).toBe(409);
        expect(await res.json()).toEqual(conflict(`User is ${status}`, { userStatus: status }));
      }
    });

    test('when the primary group is among the secondary groups, then 409 Primary and secondary group name cannot be same.', async () => {
      const res = await enroll(userBody(nextId(), { secondaryGroups: 'vip, retail' }));
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(conflict('Primary and secondary group name cannot be same.'));
    });

    test('when a group does not exist, then 409 naming the first missing group', async () => {
      const res = await enroll(userBody(nextId(), { secondaryGroups: 'vip,ghost-1,ghost-2' }));
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(conflict('The group name : ghost-1 does not exist in the system.'));
      const primary = await enroll(userBody(nextId(), { primaryGroup: 'nowhere', secondaryGroups: 'ghost-1' }));
      expect(await primary.json()).toEqual(conflict('The group name : nowhere does not exist in the system.'));
    });

    test('when the mobile number belongs to a user who is not DELETED, then 409 Mobile number already registered', async () => {
      const mobileNumber = uniqueMobile();
      await expectCreated(userBody(nextId(), { mobileNumber }));
      const res = await enroll(userBody(nextId(), { mobileNumber }));
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(conflict('Mobile number already registered'));
    });

    test("when the mobile number is another user's with or without the leading '+', then 409 Mobile number already registered, and the holder keeps the number as sent", async () => {
      const withPlus = uniqueMobile();
      const withoutPlus = uniqueMobile().slice(1);
      for (const [held, claimed] of [
        [withPlus, withPlus.slice(1)],
        [withoutPlus, `+${withoutPlus}`],
      ]) {
        const holder = nextId();
        await expectCreated(userBody(holder, { mobileNumber: held }));
        expect(await (await getUser(holder)).json()).toMatchObject({ mobileNumber: held });
        const res = await enroll(userBody(nextId(), { mobileNumber: claimed }));
        expect(res.status).toBe(409);
        expect(await res.json()).toEqual(conflict('Mobile number already registered'));
      }
    });

    test('when a field is invalid, then 422 [Invalid field <name>] with error Invalid data.', async () => {
      const res = await enroll(userBody(nextId(), { emailId: 'not-an-email' }));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField('emailId'));
    });

    test('when the body is not JSON, then 400 Malformed request body', async () => {
      const res = await enroll('{"userId": ');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', '/v1/users'));
    });

    test('when the content type is not JSON, then 415 Content type <type> not supported', async () => {
      const res = await fetch(`${service.url}/v1/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual(errorBody(415, 'Unsupported Media Type', "Content type 'text/plain' not supported", '/v1/users'));
    });

    test('when the caller address is not in the client allow-list, then 401 IP not whitelisted', async () => {
      const other = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['10.0.0.0/8'] });
      const res = await enroll(userBody(nextId()), {}, other.accessToken);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(ipRefused('/v1/users'));
    });

    test('when the access token is invalid, then 401 with only error and error_description', async () => {
      const res = await enroll(userBody(nextId()), {}, 'not.a.token');
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_token', error_description: 'Invalid access token: not.a.token' });
    });

    test('when another method is used on /v1/users, then 405 Request method <method> is not supported', async () => {
      for (const method of ['PUT', 'PATCH', 'DELETE']) {
        const res = await fetch(`${service.url}/v1/users`, { method, headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST, GET, HEAD');
        expect(await res.json()).toEqual(errorBody(405, 'Method Not Allowed', `Request method '${method}' is not supported`, '/v1/users'));
      }
    });
  });

  describe('authentication', () => {
    test('when there is no token, then 401 Full authentication is required', async () => {
      const res = await enroll(userBody(nextId()), {}, null);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
      });
    });

    test('when the token lacks the users scope, then 403 insufficient_scope', async () => {
      const otp = await createClientWithToken(service, { scopes: ['otp'] });
      const res = await enroll(userBody(nextId()), {}, otp.accessToken);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        error: 'insufficient_scope',
        error_description: "The access token does not grant the scope 'users'",
      });
    });
  });

  describe('order of checks', () => {
    test('when there is no token and the method is wrong, then authentication answers first', async () => {
      const res = await fetch(`${service.url}/v1/users`, { method: 'PUT' });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
      });
    });

    test('when the address is refused and the method is wrong, then the allow-list answers first', async () => {
      const other = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['10.0.0.0/8'] });
      const res = await fetch(`${service.url}/v1/users`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${other.accessToken}`, 'content-type': 'text/plain' },
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(ipRefused('/v1/users'));
    });

    test('when the method is wrong and the content type too, then 405 comes before 415', async () => {
      const res = await fetch(`${service.url}/v1/users`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual(errorBody(405, 'Method Not Allowed', "Request method 'PUT' is not supported", '/v1/users'));
    });

    test('when the content type is wrong and the body malformed, then 415 comes before 400', async () => {
      const res = await fetch(`${service.url}/v1/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
        body: '{',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual(
        errorBody(415, 'Unsupported Media Type', "Content type 'application/xml' not supported", '/v1/users'),
      );
    });

    test('when a field is invalid and the user exists, then 422 comes before 409', async () => {
      const userId = nextId();
      await insertUser(service.ctx.mongo, { userId });
      const res = await enroll(userBody(userId, { lastName: '' }));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField('lastName'));
    });
  });

  describe('required and optional fields', () => {
    test.each(['userId', 'primaryGroup', 'firstName', 'lastName'])('when %s is missing, then 422 naming it', async (field) => {
      const body = userBody(nextId());
      delete body[field];
      const res = await enroll(body);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField(field));
    });

    test('when neither emailId nor mobileNumber is given and no predefinedCode, then 422 [Invalid field emailId]', async () => {
      const { emailId: _ignored, ...body } = userBody(nextId());
      const res = await enroll(body);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField('emailId'));
    });

    test('when secondaryGroups, emailId and mobileNumber are all absent but a code is predefined, then 201', async () => {
      await expectCreated({ userId: nextId(), primaryGroup: 'retail', firstName: 'A', lastName: 'B', predefinedCode: 'WXYZ2345' });
    });
  });

  describe('400 only for bodies that are not JSON objects; 422 names the first field in table order', () => {
    test.each([
      ['an array', '[]'],
      ['a string', '"user"'],
      ['null', 'null'],
      ['a number', '42'],
      ['empty (Content-Length: 0)', ''],
    ])('when the body is %s, then 400 Malformed request body', async (_label, raw) => {
      const res = await enroll(raw);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', '/v1/users'));
    });

    test('when several fields are invalid, then the first in the documented field order is named, whatever the key order', async () => {
      const res = await enroll({ comments: 7, mobileNumber: '12', lastName: 'L', firstName: 'F', primaryGroup: '', userId: 'ok' });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField('primaryGroup'));
    });

    test('when a required field is missing and an earlier one is invalid, then the earlier one is named', async () => {
      const res = await enroll({ userId: 'bad id!', firstName: 'F' });
      expect(await res.json()).toEqual(invalidField('userId'));
    });

    test('when a field has the wrong type or is null, then 422 naming it (not 400)', async () => {
      expect(await (await enroll(userBody(nextId(), { firstName: 12 }))).json()).toEqual(invalidField('firstName'));
      expect(await (await enroll(userBody(nextId(), { secondaryGroups: ['vip'] }))).json()).toEqual(invalidField('secondaryGroups'));
      expect(await (await enroll(userBody(nextId(), { comments: null }))).json()).toEqual(invalidField('comments'));
      expect(await (await enroll(userBody(nextId(), { preferredStatus: 'ACTIVE' }))).json()).toEqual(invalidField('preferredStatus'));
      expect(await (await enroll(userBody(nextId(), { sourceType: 'LDAP' }))).json()).toEqual(invalidField('sourceType'));
    });

    test('when the body has a field the schema does not list, then 422 naming it', async () => {
      const res = await enroll(userBody(nextId(), { password: 'x' }));
      expect(await res.json()).toEqual(invalidField('password'));
    });
  });

  describe('formats', () => {
    test.each([
      ['userId', 'has space'],
      ['userId', 'x'.repeat(65)],
      ['userId', ''],
      ['loginId', 'a/b'],
      ['firstName', 'x'.repeat(101)],
      ['lastName', ''],
      ['emailId', 'a@'],
      ['mobileNumber', '123456789'],
      ['mobileNumber', '1234567890123456'],
      ['mobileNumber', '+12-3456-7890'],
      ['predefinedCode', 'ab c'],
    ])('when %s is %p, then 422 naming it', async (field, value) => {
      const res = await enroll(userBody('fmt-user', { [field]: value }));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(invalidField(field));
    });

    test('when the values sit on the limits, then they are accepted', async () => {
      await expectCreated(
        userBody('A.b_c@d-9'.padEnd(64, 'z'), {
          emailId: 'limits@example.com',
          firstName: 'x'.repeat(100),
          lastName: 'y',
          mobileNumber: '+' + '9'.repeat(15),
        }),
      );
      await expectCreated(userBody(nextId(), { mobileNumber: '5'.repeat(10).replace(/^5{4}/, '4444') }));
    });
  });

  test('when the user id is activate in any case (the activation route has that path), then 422 naming userId and nothing is stored', async () => {
    // /v1/users/activate is the activation route, so a user by that name could never be read,
    // changed or deleted through /v1/users/{userId}.
    const res = await enroll(userBody('activate'));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(invalidField('userId'));
    expect(await service.ctx.mongo.collection('users').countDocuments({ userId: 'activate' })).toBe(0);
    // Paths match whatever the case, so every spelling is refused; a longer id is fine.
    expect(await (await enroll(userBody('Activate'))).json()).toEqual(invalidField('userId'));
    expect((await enroll(userBody('activated'))).status).toBe(201);
  });

  describe('order of the business checks', () => {
    test('when the user exists and the groups are wrong too, then User is <status> wins', async () => {
      const userId = nextId();
      await insertUser(service.ctx.mongo, { userId, status: 'ACTIVE' });
      const res = await enroll(userBody(userId, { primaryGroup: 'ghost', secondaryGroups: 'ghost' }));
      expect(await res.json()).toEqual(conflict('User is ACTIVE', { userStatus: 'ACTIVE' }));
    });

    test('when the primary group is repeated and missing, then the same-group rule wins', async () => {
      const res = await enroll(userBody(nextId(), { primaryGroup: 'ghost', secondaryGroups: 'ghost' }));
      expect(await res.json()).toEqual(conflict('Primary and secondary group name cannot be same.'));
    });

    test('when a group is missing and the mobile number is taken, then the missing group wins', async () => {
      const mobileNumber = uniqueMobile();
      await insertUser(service.ctx.mongo, { userId: nextId(), mobileNumber });
      const res = await enroll(userBody(nextId(), { secondaryGroups: 'ghost', mobileNumber }));
      expect(await res.json()).toEqual(conflict('The group name : ghost does not exist in the system.'));
    });

    test('when the mobile number belongs to a DELETED user, then it can be enrolled again', async () => {
      const mobileNumber = uniqueMobile();
      await insertUser(service.ctx.mongo, { userId: nextId(), mobileNumber, status: 'DELETED' });
      await expectCreated(userBody(nextId(), { mobileNumber }));
    });
  });

  describe('race safety (unique indexes)', () => {
    test('when 20 requests enroll the same userId at once, then exactly one 201 and nineteen 409 User is CREATED', async () => {
      const userId = nextId();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => enroll(userBody(userId, { firstName: `F${i}` }))));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, ...Array<number>(19).fill(409)]);
      for (const res of results.filter((r) => r.status === 409)) {
        expect(await res.json()).toEqual(conflict('User is CREATED', { userStatus: 'CREATED' }));
      }
    });

    test('when 20 different users claim the same mobile number at once, then exactly one 201 and nineteen 409 Mobile number already registered', async () => {
      const mobileNumber = uniqueMobile();
      const results = await Promise.all(Array.from({ length: 20 }, () => enroll(userBody(nextId(), { mobileNumber }))));
      expect(results.map((r) => r.status).sort()).toEqual([201, ...Array<number>(19).fill(409)]);
      for (const res of results.filter((r) => r.status === 409))
        expect(await res.json()).toEqual(conflict('Mobile number already registered'));
    });
  });

  describe('GET and DELETE /v1/users/{userId}', () => {
    test('when an unknown user is read or deleted, then 404 User not found', async () => {
      const res = await getUser('nobody');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/users/nobody'));
      const del = await fetch(`${service.url}/v1/users/nobody`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(del.status).toBe(404);
      expect(await del.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/users/nobody'));
    });

    test('when a user is deleted, then 204, status DELETED, the mobile number is free and the userId stays taken', async () => {
      const userId = nextId();
      const mobileNumber = uniqueMobile();
      await expectCreated(userBody(userId, { mobileNumber }));
      const del = await fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      const got = (await (await getUser(userId)).json()) as Record<string, unknown>;
      expect(got.status).toBe('DELETED');
      expect(got.activation).toBeUndefined();
      const again = await fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(again.status).toBe(204);
      await expectCreated(userBody(nextId(), { mobileNumber }));
      const reuse = await enroll(userBody(userId));
      expect(await reuse.json()).toEqual(conflict('User is DELETED', { userStatus: 'DELETED' }));
    });

    test('when a deleted user asks for an OTP, then 404 User not found', async () => {
      const userId = nextId();
      const mobileNumber = uniqueMobile();
      await expectCreated(userBody(userId, { mobileNumber }));
      await fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      const otp = await createClientWithToken(service, { scopes: ['otp'] });
      const res = await sendJson(`${service.url}/v1/svc-otp`, 'POST', otp.accessToken, {
        userId,
        dispatchOptions: { SMS: 'otp_sms' },
        dynamicMacros: {},
        attempts: 3,
        expiresIn: 300,
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/svc-otp'));
    });

    test('when another method is used on /v1/users/{userId}, then 405', async () => {
      const res = await fetch(`${service.url}/v1/users/someone`, { method: 'PUT', headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE');
      expect(await res.json()).toEqual(errorBody(405, 'Method Not Allowed', "Request method 'PUT' is not supported", '/v1/users/someone'));
    });

    test('when the caller is not in the allow-list, then reading a user is refused too', async () => {
      const other = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['10.0.0.0/8'] });
      const res = await fetch(`${service.url}/v1/users/someone`, { headers: { authorization: `Bearer ${other.accessToken}` } });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(ipRefused('/v1/users/someone'));
    });
  });

  describe('IP allow-list on the real route', () => {
    test('when the client allows the IPv4 loopback range, then enrollment over IPv4 goes through', async () => {
      const c = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.0/8'] });
      const res = await enroll(userBody(nextId()), {}, c.accessToken);
      expect(res.status).toBe(201);
    });

    test('when the service listens on IPv6 loopback, then ::1/128 decides', async () => {
      const server = await new Promise<Server>((resolve) => {
        const s = buildApp(service.ctx).listen(0, '::1', () => resolve(s));
      });
      try {
        const url = `http://[::1]:${(server.address() as AddressInfo).port}/v1/users`;
        const v6 = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['::1/128'] });
        const v4 = await createClientWithToken(service, { scopes: ['users'], allowedIps: ['127.0.0.1/32'] });
        expect((await sendJson(url, 'POST', v6.accessToken, userBody(nextId()))).status).toBe(201);
        const refused = await sendJson(url, 'POST', v4.accessToken, userBody(nextId()));
        expect(refused.status).toBe(401);
        expect(await refused.json()).toEqual(ipRefused('/v1/users'));
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    test('when TRUST_PROXY=1, then the X-Forwarded-For address set by the proxy decides', async () => {
      const proxied = await startTestService('usersproxy', { TRUST_PROXY: '1' });
      try {
        await createGroups(proxied, ['retail']);
        const c = await createClientWithToken(proxied, { scopes: ['users'], allowedIps: ['203.0.113.0/24'] });
        const ok = await sendJson(`${proxied.url}/v1/users`, 'POST', c.accessToken, userBody('proxied1'), {
          'x-forwarded-for': '198.51.100.1, 203.0.113.5',
        });
        expect(ok.status).toBe(201);
        const spoofed = await sendJson(`${proxied.url}/v1/users`, 'POST', c.accessToken, userBody('proxied2'), {
          'x-forwarded-for': '203.0.113.5, 198.51.100.1',
        });
        expect(spoofed.status).toBe(401);
        expect(await spoofed.json()).toEqual(ipRefused('/v1/users', '198.51.100.1'));
      } finally {
        await proxied.close();
      }
    });
  });
});
