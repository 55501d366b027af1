import { randomBytes } from 'node:crypto';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { sealContext } from '../../core/idempotency/idempotent-requests.js';
import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson, userBody } from '../support/users-helpers.js';

/**
 * Idempotency-Key on the creating requests other than OTP's: a retry with the same key and the
 * same request creates nothing new and answers the same; another request with the key is 422;
 * requests with one key at once create one thing.
 */
describe('Idempotency-Key on creating requests', () => {
  let service: TestService;
  let enterprise: string;
  let otherClient: string;
  let enterpriseClientId: string;

  beforeAll(async () => {
    service = await startTestService('idemcreate');
    await createGroups(service, ['retail']);
    ({ accessToken: enterprise, clientId: enterpriseClientId } = await createClientWithToken(service, {
      scopes: ['users', 'notifications'],
    }));
    otherClient = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'idem1' });
    await insertUser(service.ctx.mongo, { userId: 'idem2' });
  });
  afterAll(async () => {
    await service.close();
  });

  const records = () => service.ctx.mongo.collection('idempotency_records');
  const adminToken = () => service.config.adminToken;
  const createNotification = (body: unknown, key?: string, token = enterprise) =>
    sendJson(`${service.url}/v1/notifications`, 'POST', token, body, key === undefined ? {} : { 'idempotency-key': key });
  const notificationsOf = (userId: string) => service.ctx.mongo.collection('notifications').countDocuments({ userId });
  const createClient = (body: unknown, key?: string) =>
    sendJson(`${service.url}/admin/clients`, 'POST', adminToken(), body, key === undefined ? {} : { 'idempotency-key': key });
  const clientsNamed = (name: string) => service.ctx.mongo.collection('clients').countDocuments({ name });
  const adminPost = (path: string, key?: string) =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken()}`, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    });
  const tokenWorks = async (clientId: string, clientSecret: string) =>
    (await requestToken(service, { clientId, clientSecret })).status === 200;
  /** Makes a finished request look as if its process had died after the work and before storing the answer. */
  const diedBeforeAnswering = (key: string) =>
    records().updateOne({ key }, { $set: { state: 'PENDING', startedAt: new Date(Date.now() - 120_000) }, $unset: { answer: 1 } });

  describe('POST /v1/notifications', () => {
    test('when a create is retried with the same key and body, then the first answer comes again marked replayed and one notification exists', async () => {
      const body = notificationBody('idem1', { numberMatch: true });
      const first = await createNotification(body, 'n-retry');
      expect(first.status).toBe(201);
      const created = (await first.json()) as { notification_uuid: string; number: string };
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      const again = await createNotification({ ...body }, 'n-retry');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(`/v1/notifications/${created.notification_uuid}`);
      expect(await again.json()).toEqual(created);
      expect(await notificationsOf('idem1')).toBe(1);
    });

    test('when the same key comes with another body, then 422 and nothing is created', async () => {
      expect((await createNotification(notificationBody('idem2'), 'n-other')).status).toBe(201);
      const other = await createNotification(notificationBody('idem2', { expiresIn: 60 }), 'n-other');
      expect(other.status).toBe(422);
      expect(await other.json()).toEqual(
        errorBody(422, 'Invalid data.', 'Idempotency-Key was already used with a different request', '/v1/notifications'),
      );
      expect(await notificationsOf('idem2')).toBe(1);
    });

    test('when ten creates with one key arrive at once, then one notification is created and every other answer is it again or 409', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-race' });
      const answers = await Promise.all(Array.from({ length: 10 }, () => createNotification(notificationBody('idem-race'), 'n-race')));
      const bodies = await Promise.all(
        answers.map(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> })),
      );
      const created = bodies.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.notification_uuid)).size).toBe(1);
      for (const refused of bodies.filter((a) => a.status !== 201)) {
        expect(refused).toEqual({
          status: 409,
          body: errorBody(
            409,
            'Conflict',
            'A request with this Idempotency-Key is still being processed: retry after it has been answered',
            '/v1/notifications',
          ),
        });
      }
      expect(await notificationsOf('idem-race')).toBe(1);
    });

    test('when another client uses the same key, then it is its own key and creates its own notification', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-scope' });
      const mine = (await (await createNotification(notificationBody('idem-scope'), 'n-shared')).json()) as { notification_uuid: string };
      const theirs = await createNotification(notificationBody('idem-scope'), 'n-shared', otherClient);
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(((await theirs.json()) as { notification_uuid: string }).notification_uuid).not.toBe(mine.notification_uuid);
      expect(await notificationsOf('idem-scope')).toBe(2);
    });

    test('when the request holding the key has not answered yet, then a retry is 409 and creates nothing', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-busy' });
      expect((await createNotification(notificationBody('idem-busy'), 'n-busy')).status).toBe(201);
      await records().updateOne({ key: 'n-busy' }, { $set: { state: 'PENDING', startedAt: new Date() }, $unset: { answer: 1 } });
      const retry = await createNotification(notificationBody('idem-busy'), 'n-busy');
      expect(retry.status).toBe(409);
      expect(await notificationsOf('idem-busy')).toBe(1);
    });

    test('when the request holding the key started 30 s ago, then the 409 says with Retry-After how long until a retry may take its claim over', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-wait' });
      expect((await createNotification(notificationBody('idem-wait'), 'n-wait')).status).toBe(201);
      await records().updateOne(
        { key: 'n-wait' },
        { $set: { state: 'PENDING', startedAt: new Date(Date.now() - 30_000) }, $unset: { answer: 1 } },
      );
      const retry = await createNotification(notificationBody('idem-wait'), 'n-wait');
      expect(retry.status).toBe(409);
      const wait = Number(retry.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(29);
      expect(wait).toBeLessThanOrEqual(31);
      // Under a second left: still 1 second, never 0 (700 ms, so a slow request still arrives within the lease).
      await records().updateOne({ key: 'n-wait' }, { $set: { startedAt: new Date(Date.now() - 59_300) } });
      expect((await createNotification(notificationBody('idem-wait'), 'n-wait')).headers.get('retry-after')).toBe('1');
      expect(await notificationsOf('idem-wait')).toBe(1);
    });

    test('when the first request died after creating the notification and before answering, then the retry answers that notification and pushes no second one', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-crash' });
      const first = (await (await createNotification(notificationBody('idem-crash'), 'n-crash')).json()) as { notification_uuid: string };
      await diedBeforeAnswering('n-crash');
      const retry = await createNotification(notificationBody('idem-crash'), 'n-crash');
      expect(retry.status).toBe(201);
      expect(await retry.json()).toEqual(first);
      expect(await notificationsOf('idem-crash')).toBe(1);
      // Answered now: the next retry is a replay.
      expect((await createNotification(notificationBody('idem-crash'), 'n-crash')).headers.get('idempotent-replayed')).toBe('true');
    });

    test('when a keyed create is refused, then the key is given back and a later retry may succeed', async () => {
      const refused = await createNotification(notificationBody('idem-later'), 'n-later');
      expect(refused.status).toBe(404);
      expect(await records().countDocuments({ key: 'n-later' })).toBe(0);
      await insertUser(service.ctx.mongo, { userId: 'idem-later' });
      expect((await createNotification(notificationBody('idem-later'), 'n-later')).status).toBe(201);
      expect(await notificationsOf('idem-later')).toBe(1);
    });

    test('when the key is empty, too long or not visible ASCII, then 422 and nothing is created', async () => {
      for (const key of ['', 'a'.repeat(256), 'with space']) {
        const res = await createNotification(notificationBody('idem1'), key);
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(
          errorBody(422, 'Invalid data.', 'Idempotency-Key must be 1 to 255 visible ASCII characters', '/v1/notifications'),
        );
      }
      expect(await notificationsOf('idem1')).toBe(1);
    });

    test('when the key comes as a structured-field string ("abc"), then it is the key without its quotes, escapes read', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-quoted' });
      const first = await createNotification(notificationBody('idem-quoted'), '"n-quoted"');
      expect(first.status).toBe(201);
      const bare = await createNotification(notificationBody('idem-quoted'), 'n-quoted');
      expect(bare.headers.get('idempotent-replayed')).toBe('true');
      expect(await bare.json()).toEqual(await first.json());
      expect(await records().countDocuments({ key: 'n-quoted' })).toBe(1);
      expect((await createNotification(notificationBody('idem-quoted'), '"n-\\"q\\\\"')).status).toBe(201);
      expect(await records().countDocuments({ key: 'n-"q\\' })).toBe(1);
      expect(await notificationsOf('idem-quoted')).toBe(2);
    });

    test('when a quoted key is malformed or holds no visible key, then 422 and nothing is created', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-badquote' });
      for (const key of ['"unclosed', '"a"b"', '"bad\\escape"', '""', '" "', '"ok";param=1']) {
        const res = await createNotification(notificationBody('idem-badquote'), key);
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(
          errorBody(422, 'Invalid data.', 'Idempotency-Key must be 1 to 255 visible ASCII characters', '/v1/notifications'),
        );
      }
      expect(await notificationsOf('idem-badquote')).toBe(0);
    });

    test('when the key has expired, then the same key starts a new request and creates a new notification', async () => {
      await insertUser(service.ctx.mongo, { userId: 'idem-expired' });
      const first = (await (await createNotification(notificationBody('idem-expired'), 'n-expired')).json()) as {
        notification_uuid: string;
      };
      await records().updateOne({ key: 'n-expired' }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const later = await createNotification(notificationBody('idem-expired', { expiresIn: 60 }), 'n-expired');
      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(((await later.json()) as { notification_uuid: string }).notification_uuid).not.toBe(first.notification_uuid);
      expect(await notificationsOf('idem-expired')).toBe(2);
      expect(await records().countDocuments({ key: 'n-expired' })).toBe(1);
    });

    test('when the key is stored, then it is scoped by enterprise, client and route and holds no body in clear beyond the answer', async () => {
      const record = await records().findOne({ key: 'n-retry' });
      expect(record).toMatchObject({
        enterpriseId: 'default',
        callerId: enterpriseClientId,
        route: 'POST /v1/notifications',
        state: 'DONE',
        requestHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(JSON.stringify(record)).not.toContain('Approve the login');
    });
  });

  describe('POST /admin/clients', () => {
    const clientBody = (name: string) => ({ name, scopes: ['otp'], allowedIps: ['127.0.0.1'] });
    type Created = { client_id: string; client_secret: string; callback_secret: string };
    /** The 409 of a retry whose answer's secret is no longer kept, naming the client it created. */
    const secretNotKept = (clientId: string) =>
      errorBody(
        409,
        'Conflict',
        'The request with this Idempotency-Key succeeded, but its answer held a secret that is shown once and no longer kept: rotate the secret to get a new one',
        '/admin/clients',
        { location: `/admin/clients/${clientId}` },
      );

    test('when a creation is retried with the same key within the secret window, then the same client and secrets come again and one client exists', async () => {
      const first = await createClient(clientBody('idem-client'), 'c-retry');
      expect(first.status).toBe(201);
      const created = (await first.json()) as Created;
      const again = await createClient(clientBody('idem-client'), 'c-retry');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(`/admin/clients/${created.client_id}`);
      expect(await again.json()).toEqual(created);
      expect(await clientsNamed('idem-client')).toBe(1);
      expect(await tokenWorks(created.client_id, created.client_secret)).toBe(true);
      // At rest the answer is sealed: neither secret is readable in the store.
      const stored = JSON.stringify(await records().findOne({ key: 'c-retry' }));
      expect(stored).not.toContain(created.client_secret);
      expect(stored).not.toContain(created.callback_secret);
    });

    test('when the retry comes after the secret window, then 409 says the secret is no longer kept, names the client, and nothing is created', async () => {
      const created = (await (await createClient(clientBody('idem-late'), 'c-late')).json()) as Created;
      await records().updateOne({ key: 'c-late' }, { $set: { 'answer.secretUntil': new Date(Date.now() - 1000) } });
      const late = await createClient(clientBody('idem-late'), 'c-late');
      expect(late.status).toBe(409);
      expect(await late.json()).toEqual(secretNotKept(created.client_id));
      expect(await clientsNamed('idem-late')).toBe(1);
      expect((await records().findOne({ key: 'c-late' }))?.answer).not.toHaveProperty('sealed');
    });

    test('when the kept answer no longer opens (sealed with a key no longer configured), then the retry gets the same 409 as after the window and the sealed answer is dropped', async () => {
      const created = (await (await createClient(clientBody('idem-unopenable'), 'c-unopenable')).json()) as Created;
      const record = await records().findOne({ key: 'c-unopenable' });
      // What a key dropped before a reseal leaves: a value only that key could open.
      const lostKey = randomBytes(32);
      const sealedWithLostKey = encryptSecret(JSON.stringify(created), lostKey, sealContext(String(record?.claimId)));
      await records().updateOne({ key: 'c-unopenable' }, { $set: { 'answer.sealed': sealedWithLostKey } });
      const retry = await createClient(clientBody('idem-unopenable'), 'c-unopenable');
      expect(retry.status).toBe(409);
      expect(await retry.json()).toEqual(secretNotKept(created.client_id));
      expect(await clientsNamed('idem-unopenable')).toBe(1);
      expect((await records().findOne({ key: 'c-unopenable' }))?.answer).not.toHaveProperty('sealed');
    });

    test('when the same key comes with another body, then 422 and no second client', async () => {
      expect((await createClient(clientBody('idem-first'), 'c-other')).status).toBe(201);
      const other = await createClient(clientBody('idem-second'), 'c-other');
      expect(other.status).toBe(422);
      expect(await other.json()).toEqual(
        errorBody(422, 'Invalid data.', 'Idempotency-Key was already used with a different request', '/admin/clients'),
      );
      expect(await clientsNamed('idem-second')).toBe(0);
    });

    test('when five creations with one key arrive at once, then one client is created', async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => createClient(clientBody('idem-client-race'), 'c-race')));
      expect(answers.every((res) => res.status === 201 || res.status === 409)).toBe(true);
      expect(answers.some((res) => res.status === 201)).toBe(true);
      expect(await clientsNamed('idem-client-race')).toBe(1);
    });

    test('when the first request died after creating the client and before answering, then the retry answers that client with new secrets that work', async () => {
      const first = (await (await createClient(clientBody('idem-client-crash'), 'c-crash')).json()) as Created;
      await diedBeforeAnswering('c-crash');
      const retry = await createClient(clientBody('idem-client-crash'), 'c-crash');
      expect(retry.status).toBe(201);
      const resumed = (await retry.json()) as Created;
      expect(resumed.client_id).toBe(first.client_id);
      expect(await clientsNamed('idem-client-crash')).toBe(1);
      expect(await tokenWorks(resumed.client_id, resumed.client_secret)).toBe(true);
      // The first secret was never shown to anyone: it stops at once.
      expect(await tokenWorks(first.client_id, first.client_secret)).toBe(false);
    });
  });

  describe('with IDEMPOTENCY_SECRET_REPLAY_SECONDS=0', () => {
    let strict: TestService;
    beforeAll(async () => {
      strict = await startTestService('idemstrict', { IDEMPOTENCY_SECRET_REPLAY_SECONDS: '0' });
    });
    afterAll(async () => {
      await strict.close();
    });

    test('when a creation is retried, then 409 at once, no secret is kept, and no second client is created', async () => {
      const send = () =>
        sendJson(
          `${strict.url}/admin/clients`,
          'POST',
          strict.config.adminToken,
          { name: 'idem-strict', scopes: ['otp'] },
          {
            'idempotency-key': 'c-strict',
          },
        );
      const created = (await (await send()).json()) as { client_id: string };
      const retry = await send();
      expect(retry.status).toBe(409);
      expect(((await retry.json()) as { location?: string }).location).toBe(`/admin/clients/${created.client_id}`);
      const record = await strict.ctx.mongo.collection('idempotency_records').findOne({ key: 'c-strict' });
      expect(record?.answer).toEqual({ status: 201, location: `/admin/clients/${created.client_id}`, secretUntil: expect.any(Date) });
      expect(await strict.ctx.mongo.collection('clients').countDocuments({ name: 'idem-strict' })).toBe(1);
    });
  });

  describe('secret rotations', () => {
    async function confidential(name: string): Promise<{ client_id: string; client_secret: string }> {
      return (await (await createClient({ name, scopes: ['otp'] })).json()) as { client_id: string; client_secret: string };
    }

    test('when a client secret rotation is retried with the same key, then the same new secret comes again and the secret before it keeps its grace', async () => {
      const client = await confidential('idem-rotate');
      const path = `/admin/clients/${client.client_id}/secret`;
      const first = await adminPost(path, 'r-retry');
      expect(first.status).toBe(200);
      const rotated = (await first.json()) as { client_secret: string };
      const again = await adminPost(path, 'r-retry');
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(rotated);
      // Rotated once: the original secret is the previous one, still in its grace period.
      expect(await tokenWorks(client.client_id, client.client_secret)).toBe(true);
      expect(await tokenWorks(client.client_id, rotated.client_secret)).toBe(true);
    });

    test('when a callback secret rotation is retried with the same key, then the same secret comes again', async () => {
      const client = await confidential('idem-callback');
      const path = `/admin/clients/${client.client_id}/callback-secret`;
      const first = (await (await adminPost(path, 'cb-retry')).json()) as { callback_secret: string };
      const again = await adminPost(path, 'cb-retry');
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(first);
    });

    test('when the key of one rotation is used for another client, then 422 and that client is not rotated', async () => {
      const one = await confidential('idem-rotate-one');
      const two = await confidential('idem-rotate-two');
      expect((await adminPost(`/admin/clients/${one.client_id}/secret`, 'r-other')).status).toBe(200);
      const other = await adminPost(`/admin/clients/${two.client_id}/secret`, 'r-other');
      expect(other.status).toBe(422);
      expect(await other.json()).toEqual(
        errorBody(
          422,
          'Invalid data.',
          'Idempotency-Key was already used with a different request',
          `/admin/clients/${two.client_id}/secret`,
        ),
      );
      expect(await tokenWorks(two.client_id, two.client_secret)).toBe(true);
    });

    test('when the first rotation died after rotating and before answering, then the retry rotates nothing more: the secret before it keeps its grace and the unseen secret is replaced', async () => {
      const client = await confidential('idem-rotate-crash');
      const path = `/admin/clients/${client.client_id}/secret`;
      const first = (await (await adminPost(path, 'r-crash')).json()) as { client_secret: string; previousSecretExpiresAt: string };
      await diedBeforeAnswering('r-crash');
      const retry = await adminPost(path, 'r-crash');
      expect(retry.status).toBe(200);
      const resumed = (await retry.json()) as { client_id: string; client_secret: string; previousSecretExpiresAt: string };
      expect(resumed.client_id).toBe(client.client_id);
      // The grace the first rotation gave the secret before it stands: not ended by a second rotation.
      expect(resumed.previousSecretExpiresAt).toBe(first.previousSecretExpiresAt);
      expect(await tokenWorks(client.client_id, client.client_secret)).toBe(true);
      expect(await tokenWorks(client.client_id, resumed.client_secret)).toBe(true);
      // The first attempt's secret was never shown to anyone: it stops at once.
      expect(await tokenWorks(client.client_id, first.client_secret)).toBe(false);
      expect((await adminPost(path, 'r-crash')).headers.get('idempotent-replayed')).toBe('true');
    });

    test('when two rotations with one key arrive at once, then the client is rotated once', async () => {
      const client = await confidential('idem-rotate-race');
      const answers = await Promise.all([1, 2, 3].map(() => adminPost(`/admin/clients/${client.client_id}/secret`, 'r-race')));
      expect(answers.map((res) => res.status).sort()).toEqual(expect.arrayContaining([200]));
      expect(answers.every((res) => res.status === 200 || res.status === 409)).toBe(true);
      const entries = await service.ctx.mongo
        .collection('activity')
        .countDocuments({ action: 'client.secret-rotated', clientId: client.client_id });
      expect(entries).toBe(1);
    });
  });

  describe('POST /admin/users/{userId}/activation', () => {
    const issueOf = async (userId: string) =>
      ((await service.ctx.mongo.collection('users').findOne({ userId })) as { activation?: { issue: number } } | null)?.activation?.issue;

    test('when a re-issue is retried with the same key, then the first answer comes again and one new code is issued', async () => {
      const enrolled = await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody('idem-reissue'));
      expect(enrolled.status).toBe(201);
      const before = await issueOf('idem-reissue');
      const path = '/admin/users/idem-reissue/activation';
      const first = await adminPost(path, 'a-retry');
      expect(first.status).toBe(202);
      const answer = await first.json();
      const again = await adminPost(path, 'a-retry');
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(answer);
      expect(await issueOf('idem-reissue')).toBe((before ?? 0) + 1);

      const other = await adminPost(`${path}?comments=again`, 'a-retry');
      expect(other.status).toBe(422);
      expect(await issueOf('idem-reissue')).toBe((before ?? 0) + 1);
    });

    test('when the first re-issue died after issuing the code and before answering, then the retry answers that code and issues and sends no second one', async () => {
      expect((await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody('idem-reissue-crash'))).status).toBe(201);
      const before = (await issueOf('idem-reissue-crash')) ?? 0;
      const path = '/admin/users/idem-reissue-crash/activation';
      const first = await (await adminPost(path, 'a-crash')).json();
      await diedBeforeAnswering('a-crash');
      const retry = await adminPost(path, 'a-crash');
      expect(retry.status).toBe(202);
      expect(await retry.json()).toEqual(first);
      expect(await issueOf('idem-reissue-crash')).toBe(before + 1);
      expect((await adminPost(path, 'a-crash')).headers.get('idempotent-replayed')).toBe('true');
    });
  });

  describe('POST /admin/groups, POST /admin/templates and POST /admin/signing-keys/rotation', () => {
    const adminJson = (path: string, body: unknown, key: string) =>
      sendJson(`${service.url}${path}`, 'POST', adminToken(), body, { 'idempotency-key': key });

    test('when a group creation is retried with the same key, then the first 201 comes again, not 409 exists, and another body is 422', async () => {
      const body = { name: 'idem-group', description: 'Retried' };
      const first = await adminJson('/admin/groups', body, 'g-retry');
      expect(first.status).toBe(201);
      const created = await first.json();
      const again = await adminJson('/admin/groups', body, 'g-retry');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(created);
      expect((await adminJson('/admin/groups', { name: 'idem-group-2' }, 'g-retry')).status).toBe(422);
      expect(await service.ctx.mongo.collection('groups').countDocuments({ name: { $in: ['idem-group', 'idem-group-2'] } })).toBe(1);
      // Without the key, or with another, the name is taken: 409 as before.
      expect((await adminJson('/admin/groups', body, 'g-other')).status).toBe(409);
    });

    test('when a template creation is retried with the same key, then the first 201 and Location come again, not 409 exists', async () => {
      const body = { name: 'idem_template_sms', channel: 'SMS', text: 'Hello __FIRST_NAME__', enterpriseId: 'default' };
      const first = await adminJson('/admin/templates', body, 't-retry');
      expect(first.status).toBe(201);
      const created = await first.json();
      const again = await adminJson('/admin/templates', body, 't-retry');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(await again.json()).toEqual(created);
      expect(await service.ctx.mongo.collection('templates').countDocuments({ name: 'idem_template_sms' })).toBe(1);
    });

    test('when the first group or template creation died after creating it and before answering, then the retry answers what it created, not 409 exists', async () => {
      const group = { name: 'idem-group-crash', description: 'Crashed' };
      const firstGroup = await adminJson('/admin/groups', group, 'g-crash');
      expect(firstGroup.status).toBe(201);
      const createdGroup = await firstGroup.json();
      await diedBeforeAnswering('g-crash');
      const groupRetry = await adminJson('/admin/groups', group, 'g-crash');
      expect(groupRetry.status).toBe(201);
      expect(await groupRetry.json()).toEqual(createdGroup);
      expect(await service.ctx.mongo.collection('groups').countDocuments({ name: 'idem-group-crash' })).toBe(1);

      const template = { name: 'idem_crash_sms', channel: 'SMS', text: 'Hi __FIRST_NAME__', enterpriseId: 'default' };
      const firstTemplate = await adminJson('/admin/templates', template, 't-crash');
      expect(firstTemplate.status).toBe(201);
      const createdTemplate = await firstTemplate.json();
      await diedBeforeAnswering('t-crash');
      const templateRetry = await adminJson('/admin/templates', template, 't-crash');
      expect(templateRetry.status).toBe(201);
      expect(templateRetry.headers.get('location')).toBe(firstTemplate.headers.get('location'));
      expect(await templateRetry.json()).toEqual(createdTemplate);
      // What a retry finds is its own creation only: another request's group of that name is still 409.
      expect((await adminJson('/admin/groups', group, 'g-crash-other')).status).toBe(409);
    });

    test('when a signing key rotation is retried with the same key, then the first answer comes again and the keys are rotated once', async () => {
      const rotations = () => service.ctx.mongo.collection('server_secrets').countDocuments({ name: /^signing-key-rotation:/ });
      const before = await rotations();
      const first = await adminPost('/admin/signing-keys/rotation', 'k-retry');
      expect(first.status).toBe(200);
      const rotated = await first.json();
      const again = await adminPost('/admin/signing-keys/rotation', 'k-retry');
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.json()).toEqual(rotated);
      expect(await rotations()).toBe(before + 1);
      expect((await adminPost('/admin/signing-keys/rotation?retireAtOnce=true', 'k-retry')).status).toBe(422);
      expect(await rotations()).toBe(before + 1);
    });

    test('when the first rotation died after storing the keys and before answering, then the retry answers that rotation and rotates nothing more', async () => {
      const rotations = () => service.ctx.mongo.collection('server_secrets').countDocuments({ name: /^signing-key-rotation:/ });
      const first = await adminPost('/admin/signing-keys/rotation', 'k-crash');
      expect(first.status).toBe(200);
      const rotated = await first.json();
      const after = await rotations();
      await diedBeforeAnswering('k-crash');
      const retry = await adminPost('/admin/signing-keys/rotation', 'k-crash');
      expect(retry.status).toBe(200);
      expect(await retry.json()).toEqual(rotated);
      expect(await rotations()).toBe(after);
    });
  });

  describe('a key whose request is still running, on the admin routes', () => {
    test('when a rotation is retried while its first request holds the key, then 409 with Retry-After the rest of its lease', async () => {
      const client = (await (await createClient({ name: 'idem-rotate-busy', scopes: ['otp'] })).json()) as { client_id: string };
      const path = `/admin/clients/${client.client_id}/secret`;
      expect((await adminPost(path, 'r-busy')).status).toBe(200);
      await records().updateOne({ key: 'r-busy' }, { $set: { state: 'PENDING', startedAt: new Date() }, $unset: { answer: 1 } });
      const busy = await adminPost(path, 'r-busy');
      expect(busy.status).toBe(409);
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
      expect(Number(busy.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    });
  });

  describe('POST /v1/users', () => {
    test('when an enrollment is retried, then the userId already makes it safe: 409 User is CREATED and no second user or code', async () => {
      const body = userBody('idem-enroll');
      expect((await sendJson(`${service.url}/v1/users`, 'POST', enterprise, body)).status).toBe(201);
      const retry = await sendJson(`${service.url}/v1/users`, 'POST', enterprise, body);
      expect(retry.status).toBe(409);
      expect(await retry.json()).toEqual(errorBody(409, 'Invalid data.', 'User is CREATED', '/v1/users', { userStatus: 'CREATED' }));
      expect(await service.ctx.mongo.collection('users').countDocuments({ userId: 'idem-enroll' })).toBe(1);
    });
  });
});
