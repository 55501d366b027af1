import { migrateToEnterprises } from '../../core/enterprises/enterprise-migration.js';
import { connectMongo } from '../../core/platform/db/mongo-connection.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, notificationBody } from '../support/notification-helpers.js';
import { insertUser } from '../support/user-fixtures.js';
import { otpBody, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, errorBody, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';
import { adminRequest } from '../support/admin-requests.js';

/** Enterprises as tenants: a client reaches only its own enterprise's users, and limits are per enterprise. */
describe('enterprises as tenants (cross-enterprise suite)', () => {
  let service: TestService;
  // Two clients of acme (they share acme's users) and one of globex.
  let acme: string;
  let acme2: string;
  let globex: string;

  beforeAll(async () => {
    service = await startTestService('tenancy', { RATE_LIMIT_OTP_PER_USER: '2' });
    await createGroups(service, ['retail']);
    acme = (await createClientWithToken(service, { scopes: ['users', 'otp'], enterpriseId: 'acme' })).accessToken;
    acme2 = (await createClientWithToken(service, { scopes: ['users', 'otp'], enterpriseId: 'acme' })).accessToken;
    globex = (await createClientWithToken(service, { scopes: ['users', 'otp'], enterpriseId: 'globex' })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const enroll = (token: string, userId: string, overrides: Record<string, unknown> = {}) =>
    sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, overrides));
  const read = (token: string, userId: string) =>
    fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } });
  const remove = (token: string, userId: string) =>
    fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
  const otp = (token: string, userId: string) =>
    postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId, { dispatchOptions: { EMAIL: 'otp_email' } }));

  test("when a client reads or deletes another enterprise's user, then 404 User not found and the user is untouched", async () => {
    expect((await enroll(acme, 'alice-r', { mobileNumber: uniqueMobile() })).status).toBe(201);
    const got = await read(globex, 'alice-r');
    expect(got.status).toBe(404);
    expect(await got.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/users/alice-r'));
    const deleted = await remove(globex, 'alice-r');
    expect(deleted.status).toBe(404);
    expect(await deleted.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/users/alice-r'));
    const own = await read(acme, 'alice-r');
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ userId: 'alice-r', status: 'CREATED', emailId: 'alice-r@example.com' });
  });

  test("when a client asks an OTP for another enterprise's user, then 404 User not found", async () => {
    expect((await enroll(acme, 'alice-o')).status).toBe(201);
    const res = await otp(globex, 'alice-o');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/svc-otp'));
    expect((await otp(acme, 'alice-o')).status).toBe(200);
  });

  test('when two clients share an enterprise, then both see and change its users', async () => {
    expect((await enroll(acme, 'shared-u')).status).toBe(201);
    expect((await read(acme2, 'shared-u')).status).toBe(200);
    expect((await otp(acme2, 'shared-u')).status).toBe(200);
    expect((await remove(acme2, 'shared-u')).status).toBe(204);
    expect(await (await read(acme, 'shared-u')).json()).toMatchObject({ status: 'DELETED' });
  });

  test('when the same userId and mobile number are enrolled in two enterprises, then each has its own user', async () => {
    const mobile = uniqueMobile();
    expect((await enroll(acme, 'same-id', { firstName: 'Acme', mobileNumber: mobile })).status).toBe(201);
    expect((await enroll(globex, 'same-id', { firstName: 'Globex', mobileNumber: mobile })).status).toBe(201);
    // Within one enterprise the rules still hold.
    const again = await enroll(globex, 'same-id');
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual(errorBody(409, 'Invalid data.', 'User is CREATED', '/v1/users', { userStatus: 'CREATED' }));
    const mobileTaken = await enroll(globex, 'other-id', { mobileNumber: mobile });
    expect(await mobileTaken.json()).toEqual(errorBody(409, 'Invalid data.', 'Mobile number already registered', '/v1/users'));

    expect(await (await read(acme, 'same-id')).json()).toMatchObject({ firstName: 'Acme' });
    expect(await (await read(globex, 'same-id')).json()).toMatchObject({ firstName: 'Globex' });
    expect((await remove(globex, 'same-id')).status).toBe(204);
    expect(await (await read(acme, 'same-id')).json()).toMatchObject({ firstName: 'Acme', status: 'CREATED' });
    expect(await (await read(globex, 'same-id')).json()).toMatchObject({ firstName: 'Globex', status: 'DELETED' });
  });

  test("when one enterprise spends a user's OTP budget, then another enterprise's user of the same id still gets OTPs", async () => {
    expect((await enroll(acme, 'bob-l')).status).toBe(201);
    expect((await enroll(globex, 'bob-l')).status).toBe(201);
    for (let i = 0; i < 2; i += 1) expect((await otp(acme, 'bob-l')).status).toBe(200);
    const limited = await otp(acme2, 'bob-l');
    expect(limited.status).toBe(429);
    expect((await otp(globex, 'bob-l')).status).toBe(200);
  });

  test('when a user activates, then the code is checked in the enterprise named in the body', async () => {
    expect((await enroll(acme, 'act-e', { predefinedCode: 'ACME-CODE' })).status).toBe(201);
    expect((await enroll(globex, 'act-e', { predefinedCode: 'GLOBEX-CODE' })).status).toBe(201);
    const activate = (body: unknown) => sendJson(`${service.url}/v1/users/activate`, 'POST', undefined, body);
    const wrongPlace = await activate({ enterpriseId: 'globex', userId: 'act-e', activationCode: 'ACME-CODE' });
    expect(wrongPlace.status).toBe(422);
    const ok = await activate({ enterpriseId: 'acme', userId: 'act-e', activationCode: 'ACME-CODE' });
    expect(ok.status).toBe(200);
    expect(await (await read(acme, 'act-e')).json()).toMatchObject({ status: 'ACTIVE' });
    expect(await (await read(globex, 'act-e')).json()).toMatchObject({ status: 'CREATED' });
  });

  test('when an admin re-issues an activation, then the enterprise comes from the query', async () => {
    expect((await enroll(globex, 'reissue-e')).status).toBe(201);
    const admin = (query: string) =>
      fetch(`${service.url}/admin/users/reissue-e/activation${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.config.adminToken}` },
      });
    const wrong = await admin('');
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/admin/users/reissue-e/activation'));
    expect((await admin('?enterpriseId=globex')).status).toBe(202);
    const bad = await admin('?enterpriseId=bad:id');
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual(errorBody(422, 'Invalid data.', '[Invalid field enterpriseId]', '/admin/users/reissue-e/activation'));
  });
});

describe('clients carry an enterprise (admin API)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('tenancyclients');
  });
  afterAll(async () => {
    await service.close();
  });
  const admin = (method: string, path: string, body?: unknown) => adminRequest(service, method, path, body);

  test('when a client is created with or without enterpriseId, then it is stored and shown, default `default`', async () => {
    const named = (await (await admin('POST', '/admin/clients', { name: 'n', scopes: ['otp'], enterpriseId: 'acme' })).json()) as {
      client_id: string;
    };
    const plain = (await (await admin('POST', '/admin/clients', { name: 'p', scopes: ['otp'] })).json()) as { client_id: string };
    expect(await (await admin('GET', `/admin/clients/${named.client_id}`)).json()).toMatchObject({ enterpriseId: 'acme', allowedIps: [] });
    expect(await (await admin('GET', `/admin/clients/${plain.client_id}`)).json()).toMatchObject({
      enterpriseId: 'default',
      allowedIps: [],
    });
  });

  test('when enterpriseId is not 1 to 64 of the userId alphabet, then 422', async () => {
    const res = await admin('POST', '/admin/clients', { name: 'x', scopes: ['otp'], enterpriseId: 'a:b' });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toContain('enterpriseId');
  });
});

describe('migration of data written before enterprises', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('tenancymigrate');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when old users, clients, OTPs and indexes exist, then boot moves them to `default` and replaces the indexes, and a second run changes nothing', async () => {
    // A separate database holding what the previous version wrote.
    const mongo = await connectMongo(service.config.mongodbUri.replace(/\/([^/]+)$/, '/$1_old'));
    try {
      const users = mongo.collection('users');
      await users.createIndex({ userId: 1 }, { unique: true, name: 'userId_1' });
      await users.createIndex({ liveMobileNumber: 1 }, { unique: true, sparse: true, name: 'liveMobileNumber_1' });
      const now = new Date();
      const legacy = {
        loginId: 'old',
        primaryGroup: 'retail',
        secondaryGroups: [],
        firstName: 'O',
        lastName: 'L',
        status: 'ACTIVE',
        sourceType: 'SVC',
        clientId: 'c',
        createdAt: now,
        updatedAt: now,
      };
      await users.insertOne({ ...legacy, userId: 'old-user', mobileNumber: '+15550009999', liveMobileNumber: '+15550009999' });
      await mongo.collection('clients').insertOne({
        clientId: 'old-client',
        name: 'old',
        scopes: ['otp'],
        allowedIps: [],
        redirectUris: [],
        isPublic: false,
        secretHash: null,
        createdAt: now,
      });
      await mongo.collection('otps').insertOne({ _id: 'old-otp' as never, clientId: 'old-client', userId: 'old-user', createdAt: now });
      await mongo.collection('otp_idempotency_keys').createIndex({ clientId: 1, key: 1 }, { unique: true, name: 'clientId_1_key_1' });

      const { logger } = memoryLogger();
      await migrateToEnterprises(mongo, logger);
      await migrateToEnterprises(mongo, logger);

      expect(
        await users.findOne({ userId: 'old-user' }, { projection: { _id: 0, enterpriseId: 1, liveMobileKey: 1, liveMobileNumber: 1 } }),
      ).toEqual({ enterpriseId: 'default', liveMobileKey: 'default:+15550009999' });
      expect(await mongo.collection('clients').findOne({ clientId: 'old-client' }, { projection: { _id: 0, enterpriseId: 1 } })).toEqual({
        enterpriseId: 'default',
      });
      expect(await mongo.collection('otps').findOne({ _id: 'old-otp' as never }, { projection: { _id: 0, enterpriseId: 1 } })).toEqual({
        enterpriseId: 'default',
      });
      const names = (await users.indexes()).map((i) => i.name);
      expect(names).not.toContain('userId_1');
      expect(names).not.toContain('liveMobileNumber_1');
      expect((await mongo.collection('otp_idempotency_keys').indexes()).map((i) => i.name)).not.toContain('clientId_1_key_1');

      // The migrated user is found through the enterprise look-up; another enterprise may reuse the id and number.
      const repo = createUsersRepository(mongo);
      expect(await repo.findUser({ enterpriseId: 'default', userId: 'old-user' })).toMatchObject({
        userId: 'old-user',
        mobileNumber: '+15550009999',
      });
      await repo.insert({
        ...legacy,
        enterpriseId: 'acme',
        userId: 'old-user',
        mobileNumber: '+15550009999',
        status: 'ACTIVE',
        sourceType: 'SVC',
      });
      expect(await repo.findLiveByMobile({ enterpriseId: 'default' }, '+15550009999')).toMatchObject({ enterpriseId: 'default' });
      expect(await repo.findLiveByMobile({ enterpriseId: 'acme' }, '+15550009999')).toMatchObject({ enterpriseId: 'acme' });
      // The new unique index holds within an enterprise.
      await expect(
        repo.insert({ ...legacy, enterpriseId: 'acme', userId: 'old-user', status: 'ACTIVE', sourceType: 'SVC' }),
      ).rejects.toMatchObject({ code: 11000 });
    } finally {
      await mongo.dropDatabase();
      await mongo.close();
    }
  });

  describe('notifications and sign-in', () => {
    let acmeNotify: string;
    let globexNotify: string;
    let globexApp: string;
    let acmeApp: string;
    beforeAll(async () => {
      acmeNotify = (await createClientWithToken(service, { scopes: ['users', 'notifications'], enterpriseId: 'acme' })).accessToken;
      globexNotify = (await createClientWithToken(service, { scopes: ['notifications'], enterpriseId: 'globex' })).accessToken;
      const app = (enterpriseId: string) =>
        registerClient(service.services.clients, {
          name: `${enterpriseId} app`,
          enterpriseId,
          scopes: [],
          public: true,
          redirectUris: ['http://127.0.0.1/cb'],
        });
      globexApp = (await app('globex')).client.clientId;
      acmeApp = (await app('acme')).client.clientId;
    });

    test("when a client notifies another enterprise's user, then 404 User not found, and its own enterprise's client may", async () => {
      await insertUser(service.ctx.mongo, { enterpriseId: 'acme', userId: 'alice-n' });
      const foreign = await sendJson(`${service.url}/v1/notifications`, 'POST', globexNotify, notificationBody('alice-n'));
      expect(foreign.status).toBe(404);
      expect(await foreign.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/notifications'));
      expect((await sendJson(`${service.url}/v1/notifications`, 'POST', acmeNotify, notificationBody('alice-n'))).status).toBe(201);
    });

    test("when a user token names a user through another enterprise's app, then the user API refuses it as invalid; through the user's own enterprise's app it works", async () => {
      await insertUser(service.ctx.mongo, { enterpriseId: 'acme', userId: 'alice-s' });
      const me = async (clientId: string) =>
        fetch(`${service.url}/v1/me`, {
          headers: { authorization: `Bearer ${await mintUserToken(service, { userId: 'alice-s', clientId })}` },
        });
      const foreign = await me(globexApp);
      expect(foreign.status).toBe(401);
      expect(await foreign.json()).toMatchObject({ error: 'invalid_token' });
      const own = await me(acmeApp);
      expect(own.status).toBe(200);
      expect(await own.json()).toMatchObject({ userId: 'alice-s' });
    });

    test('when an app asks who the user is, then the answer names the enterprise beside the bare userId, so one userId of two enterprises stays two accounts', async () => {
      await insertUser(service.ctx.mongo, { enterpriseId: 'acme', userId: 'alice-u' });
      const userinfo = await fetch(`${service.url}/svc/authserver/userinfo`, {
        headers: { authorization: `Bearer ${await mintUserToken(service, { userId: 'alice-u', clientId: acmeApp })}` },
      });
      expect(userinfo.status).toBe(200);
      expect(await userinfo.json()).toEqual({ sub: 'alice-u', enterprise_id: 'acme' });
    });
  });
});
