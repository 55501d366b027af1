import { notificationModel } from '../../core/notifications/notifications.repository.js';
import type { CreateNotificationInput } from '../../core/notifications/notifications.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import {
  ACTIONS,
  ASKS_ONE_PERSON_OFTEN,
  blockUser,
  enrollAndActivateWithDevice,
  mintUserToken,
  notificationBody,
  notificationsServiceOver,
  registerAppClient,
  signAnswer,
  type DeviceUser,
} from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { createGroups, errorBody, sendJson } from '../support/users-helpers.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SUCCESS = (uuid: string, verified: boolean) => ({
  status_code: 100,
  message: 'Success',
  notification_uuid: uuid,
  is_ds_verified: verified,
});

describe('Notifications: enterprise API and user API (no worker running)', () => {
  let service: TestService;
  let enterprise: string;
  let enterpriseClientId: string;
  let otherClientToken: string;
  let appClientId: string;
  let device: DeviceUser;
  let deviceToken: string;
  let plainToken: string;

  beforeAll(async () => {
    service = await startTestService('notifapi', ASKS_ONE_PERSON_OFTEN);
    await createGroups(service, ['retail']);
    ({ accessToken: enterprise, clientId: enterpriseClientId } = await createClientWithToken(service, {
      scopes: ['users', 'notifications'],
    }));
    otherClientToken = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    appClientId = await registerAppClient(service);
    device = await enrollAndActivateWithDevice(service, enterprise, 'signer1');
    deviceToken = await mintUserToken(service, { userId: device.userId, clientId: appClientId });
    await insertUser(service.ctx.mongo, { userId: 'plain1' });
    plainToken = await mintUserToken(service, { userId: 'plain1', clientId: appClientId });
  });
  afterAll(async () => {
    await service.close();
  });

  const create = (body: unknown, token = enterprise) => sendJson(`${service.url}/v1/notifications`, 'POST', token, body);
  async function created(body: Record<string, unknown>): Promise<{ notification_uuid: string; number?: string }> {
    const res = await create(body);
    expect(res.status).toBe(201);
    return (await res.json()) as { notification_uuid: string; number?: string };
  }
  const read = (uuid: string, token = enterprise) =>
    fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${token}` } });
  const cancel = (uuid: string, token = enterprise) =>
    fetch(`${service.url}/v1/notifications/${uuid}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const answer = (uuid: string, body: unknown, token = plainToken) =>
    sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', token, body);
  const dismiss = (uuid: string, token = plainToken) =>
    fetch(`${service.url}/v1/me/notifications/${uuid}/dismiss`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const meGet = (path: string, token = plainToken) => fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const userError = (status: number, error: string, message: string, path: string, code: number, extra: Record<string, unknown> = {}) => ({
    ...errorBody(status, error, message, path, extra),
    code,
  });

  describe('enterprise API', () => {
    test('when a notification is created, then 201 gives its uuid, Location, and GET reports it ACTIVE with signing status NA', async () => {
      const res = await create(notificationBody('plain1', { expiresIn: 60 }));
      expect(res.status).toBe(201);
      const body = (await res.json()) as { notification_uuid: string };
      expect(body).toEqual({ notification_uuid: expect.stringMatching(UUID_RE) });
      expect(res.headers.get('location')).toBe(`/v1/notifications/${body.notification_uuid}`);
      const got = await read(body.notification_uuid);
      expect(got.status).toBe(200);
      const record = (await got.json()) as Record<string, string>;
      expect(record).toEqual({
        notification_uuid: body.notification_uuid,
        userId: 'plain1',
        status: 'ACTIVE',
        signing_status: 'NA',
        is_ds_verified: false,
        createdAt: expect.stringMatching(ISO_RE),
        expiresAt: expect.stringMatching(ISO_RE),
      });
      expect(Date.parse(record.expiresAt) - Date.parse(record.createdAt)).toBe(60_000);
    });

    test('when expiresIn is omitted, then the notification lives 300 seconds', async () => {
      const { notification_uuid } = await created(notificationBody('plain1'));
      const record = (await (await read(notification_uuid)).json()) as Record<string, string>;
      expect(Date.parse(record.expiresAt) - Date.parse(record.createdAt)).toBe(300_000);
    });

    test('when numberMatch is asked, then the answer carries a two-digit number', async () => {
      const body = await created(notificationBody('plain1', { numberMatch: true }));
      expect(body).toEqual({ notification_uuid: expect.stringMatching(UUID_RE), number: expect.stringMatching(/^[0-9]{2}$/) });
    });

    test.each([
      [{ expiresIn: 14 }, 'Invalid field expiresIn: must be >= 15'],
      [{ expiresIn: 86401 }, 'Invalid field expiresIn: must be <= 86400'],
      [{ body: [] }, 'Invalid field body: must NOT have fewer than 1 items'],
      [{ actions: [] }, 'Invalid field actions: must NOT have fewer than 1 items'],
      [{ actions: [...ACTIONS, ...ACTIONS] }, 'Invalid field actions: must NOT have more than 5 items'],
      [
        { actions: [{ label: 'x', action: 'Accept', authlevel: 1 }] },
        'Invalid field actions[0].action: must be a lower-case letter followed by at most 31 of a-z 0-9 _',
      ],
      [{ actions: [ACTIONS[0], ACTIONS[0]] }, 'Invalid field actions: action values must be distinct'],
      [{ callbackUrl: 'http://example.com/cb' }, 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)'],
      [{ callbackUrl: 'not a url' }, 'Invalid field callbackUrl: must be an absolute URL'],
      [{ ds_required: true }, 'Invalid field ds_required: the user has no device key registered at activation'],
      [{ colour: 'red' }, 'Invalid field colour: is not allowed'],
      // The user id format (common.ids.json) names the length and the alphabet apart.
      [{ userId: '' }, 'Invalid field userId: must NOT have fewer than 1 characters'],
      [{ userId: 'a'.repeat(65) }, 'Invalid field userId: must NOT have more than 64 characters'],
      [{ userId: 'a b' }, 'Invalid field userId: must hold only the characters A-Z a-z 0-9 . _ @ -'],
    ])('when the body has %j, then 422 names the field', async (overrides, message) => {
      const res = await create(notificationBody('plain1', overrides));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', message, '/v1/notifications'));
    });

    test('when the body is not JSON or not JSON typed, then 400 and 415 in the error body', async () => {
      const malformed = await create('{oops');
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toEqual(errorBody(400, 'Bad Request', 'Malformed request body', '/v1/notifications'));
      const typed = await fetch(`${service.url}/v1/notifications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${enterprise}`, 'content-type': 'text/plain' },
        body: '{}',
      });
      expect(typed.status).toBe(415);
      expect(await typed.json()).toEqual(
        errorBody(415, 'Unsupported Media Type', "Content type 'text/plain' not supported", '/v1/notifications'),
      );
    });

    test('when the user is unknown, DELETED or blocked, then 404 User not found', async () => {
      await insertUser(service.ctx.mongo, { userId: 'gone1', status: 'DELETED' });
      await insertUser(service.ctx.mongo, { userId: 'blocked1' });
      await blockUser(service, 'blocked1');
      for (const userId of ['nobody', 'gone1', 'blocked1']) {
        const res = await create(notificationBody(userId));
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual(errorBody(404, 'Not Found', 'User not found', '/v1/notifications'));
      }
    });

    test('when the token lacks the notifications scope or is missing, then 403 and 401 with bearer error bodies', async () => {
      const scopeless = await create(notificationBody('plain1'), otherClientToken);
      expect(scopeless.status).toBe(403);
      expect(await scopeless.json()).toEqual({
        error: 'insufficient_scope',
        error_description: "The access token does not grant the scope 'notifications'",
      });
      const anonymous = await fetch(`${service.url}/v1/notifications/${crypto.randomUUID()}`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
      });
    });

    test('when a user token calls the enterprise API, then it is refused as an invalid token', async () => {
      const res = await create(notificationBody('plain1'), plainToken);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_token', error_description: `Invalid access token: ${plainToken}` });
    });

    test('when the notification is unknown or not a uuid, then GET and cancel are 404', async () => {
      for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
        const got = await read(id);
        expect(got.status).toBe(404);
        expect(await got.json()).toEqual(errorBody(404, 'Not Found', 'Notification not found', `/v1/notifications/${id}`));
        const cancelled = await cancel(id);
        expect(cancelled.status).toBe(404);
        expect(await cancelled.json()).toEqual(errorBody(404, 'Not Found', 'Notification not found', `/v1/notifications/${id}/cancel`));
      }
    });

    test('when another client of the same enterprise reads or cancels a notification, then 404 and it stays ACTIVE for its creator', async () => {
      const sibling = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const foreignRead = await read(uuid, sibling);
      expect(foreignRead.status).toBe(404);
      expect(await foreignRead.json()).toEqual(errorBody(404, 'Not Found', 'Notification not found', `/v1/notifications/${uuid}`));
      const foreignCancel = await cancel(uuid, sibling);
      expect(foreignCancel.status).toBe(404);
      expect(await foreignCancel.json()).toEqual(errorBody(404, 'Not Found', 'Notification not found', `/v1/notifications/${uuid}/cancel`));
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'ACTIVE' });
      expect((await cancel(uuid)).status).toBe(200);
    });

    test('when a notification is cancelled, then 200 gives it CANCELLED, the user can no longer answer, and a second cancel is 409', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const res = await cancel(uuid);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        notification_uuid: uuid,
        status: 'CANCELLED',
        signing_status: 'NA',
        answeredAt: expect.stringMatching(ISO_RE),
      });
      const again = await cancel(uuid);
      expect(again.status).toBe(409);
      expect(await again.json()).toEqual(
        errorBody(409, 'Conflict', 'Notification is CANCELLED', `/v1/notifications/${uuid}/cancel`, { notificationStatus: 'CANCELLED' }),
      );
      const late = await answer(uuid, { response: 'accept' });
      expect(late.status).toBe(409);
      expect(await late.json()).toEqual(
        userError(409, 'Conflict', 'Notification is CANCELLED', `/v1/me/notifications/${uuid}/action`, 4, {
          notificationStatus: 'CANCELLED',
        }),
      );
    });
  });

  describe('user API', () => {
    test('when the user lists, then only their pending, in-time notifications come, newest first, with the documented fields, paged by recordCount/startIndex', async () => {
      await insertUser(service.ctx.mongo, { userId: 'lister' });
      const token = await mintUserToken(service, { userId: 'lister', clientId: appClientId });
      const uuids: string[] = [];
      for (let i = 0; i < 4; i++)
        uuids.push(
          (
            await created(
              notificationBody('lister', { body: [{ lng: 'English', subject: `s${i}`, message: `m${i}` }], numberMatch: i === 0 }),
            )
          ).notification_uuid,
        );
      await cancel(uuids[3]);
      const all = await meGet('/v1/me/notifications', token);
      expect(all.status).toBe(200);
      const list = ((await all.json()) as { notifications: Record<string, unknown>[] }).notifications;
      expect(list.map((n) => n.notification_uuid)).toEqual([uuids[2], uuids[1], uuids[0]]);
      expect(list[2]).toEqual({
        notification_uuid: uuids[0],
        ds_required: false,
        number_match: true,
        actions: ACTIONS.map((a, index) => ({ ...a, requiresNumber: index === 0 })),
        body: [{ lng: 'English', subject: 's0', message: 'm0' }],
        created_at: expect.stringMatching(ISO_RE),
        expires_at: expect.stringMatching(ISO_RE),
      });
      const page = await meGet('/v1/me/notifications?recordCount=1&startIndex=2&enterpriseID=&startDate=&endDate=', token);
      expect(
        ((await page.json()) as { notifications: { notification_uuid: string }[] }).notifications.map((n) => n.notification_uuid),
      ).toEqual([uuids[1]]);
      const otherEnterprise = await meGet('/v1/me/notifications?enterpriseID=acme', token);
      expect(await otherEnterprise.json()).toEqual({ notifications: [] });
      const ownEnterprise = await meGet('/v1/me/notifications?enterpriseID=default&recordCount=0', token);
      expect(((await ownEnterprise.json()) as { notifications: unknown[] }).notifications).toHaveLength(3);
    });

    test('when dates are given with a zone abbreviation or an offset, then they bound createdAt; anything else is 400 code 4', async () => {
      await insertUser(service.ctx.mongo, { userId: 'dater' });
      const token = await mintUserToken(service, { userId: 'dater', clientId: appClientId });
      const { notification_uuid: uuid } = await created(notificationBody('dater'));
      const fmt = (d: Date) => d.toISOString().slice(0, 19);
      const before = new Date(Date.now() - 3_600_000);
      const after = new Date(Date.now() + 3_600_000);
      const inWindow = await meGet(
        `/v1/me/notifications?startDate=${fmt(before)}UTC&endDate=${encodeURIComponent(`${fmt(new Date(after.getTime() + 5.5 * 3_600_000))}+05:30`)}`,
        token,
      );
      expect(
        ((await inWindow.json()) as { notifications: { notification_uuid: string }[] }).notifications.map((n) => n.notification_uuid),
      ).toEqual([uuid]);
      const outside = await meGet(`/v1/me/notifications?startDate=${fmt(after)}GMT`, token);
      expect(await outside.json()).toEqual({ notifications: [] });
      const ist = await meGet(`/v1/me/notifications?endDate=${fmt(new Date(before.getTime() + 5.5 * 3_600_000))}%20IST`, token);
      expect(await ist.json()).toEqual({ notifications: [] });
      for (const [query, field] of [
        ['startDate=2026-11-21', 'startDate'],
        ['endDate=2026-02-30T10:00:00UTC', 'endDate'],
        ['startDate=2026-11-21T10:00:00XYZ', 'startDate'],
        ['recordCount=-1', 'recordCount'],
        ['startIndex=0', 'startIndex'],
      ] as const) {
        const res = await meGet(`/v1/me/notifications?${query}`, token);
        expect(res.status).toBe(400);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ status: 400, error: 'Bad Request', path: '/v1/me/notifications', code: 4 });
        expect(body.message).toMatch(new RegExp(`^Invalid field ${field}: `));
      }
    });

    test('when the user answers with one of the actions, then 200 Success, the record is UPDATED with the action, and a second answer is 409 naming the stored one', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const res = await answer(uuid, { response: 'reject' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(SUCCESS(uuid, false));
      expect(await (await read(uuid)).json()).toMatchObject({
        status: 'UPDATED',
        action: 'reject',
        signing_status: 'NA',
        is_ds_verified: false,
        answeredAt: expect.stringMatching(ISO_RE),
      });
      const again = await answer(uuid, { response: 'accept' });
      expect(again.status).toBe(409);
      expect(await again.json()).toEqual(
        userError(409, 'Conflict', 'Notification is UPDATED', `/v1/me/notifications/${uuid}/action`, 4, {
          notificationStatus: 'UPDATED',
          action: 'reject',
          is_ds_verified: false,
        }),
      );
    });

    test('when a signed, number-matched answer is sent again, then 409 names the stored action and is_ds_verified to its user, 404 to another, and the late cancel is told too', async () => {
      const { notification_uuid: uuid, number } = await created(notificationBody(device.userId, { ds_required: true, numberMatch: true }));
      const path = `/v1/me/notifications/${uuid}/action`;
      // Each signature is new (ECDSA is randomised): the repeat is recognised by the stored answer.
      const signedAccept = async () => ({ response: 'accept', number, signature: await signAnswer(device.privateKey, uuid, 'accept') });
      const first = await answer(uuid, await signedAccept(), deviceToken);
      expect(first.status).toBe(200);
      const again = await answer(uuid, await signedAccept(), deviceToken);
      expect(again.status).toBe(409);
      const stored = { notificationStatus: 'UPDATED', action: 'accept', is_ds_verified: true };
      expect(await again.json()).toEqual(userError(409, 'Conflict', 'Notification is UPDATED', path, 4, stored));
      const stranger = await answer(uuid, { response: 'accept' }, plainToken);
      expect(stranger.status).toBe(404);
      expect(await stranger.json()).toEqual(userError(404, 'Not Found', 'Notification not found', path, 4));
      const lateCancel = await cancel(uuid);
      expect(lateCancel.status).toBe(409);
      expect(await lateCancel.json()).toEqual(
        errorBody(409, 'Conflict', 'Notification is UPDATED', `/v1/notifications/${uuid}/cancel`, stored),
      );
    });

    test('when a dismissed notification is answered, then 409 says DISMISSED and names no action', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      expect((await dismiss(uuid)).status).toBe(200);
      const late = await answer(uuid, { response: 'accept' });
      expect(late.status).toBe(409);
      expect(await late.json()).toEqual(
        userError(409, 'Conflict', 'Notification is DISMISSED', `/v1/me/notifications/${uuid}/action`, 4, {
          notificationStatus: 'DISMISSED',
        }),
      );
    });

    test('when the answer is not one of the actions, malformed or unknown fields, then 422/400 code 4 and nothing changes', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const path = `/v1/me/notifications/${uuid}/action`;
      const unknown = await answer(uuid, { response: 'maybe' });
      expect(unknown.status).toBe(422);
      expect(await unknown.json()).toEqual(
        userError(422, 'Invalid data.', "Invalid field response: is not one of the notification's actions", path, 4),
      );
      const extra = await answer(uuid, { response: 'accept', note: 1 });
      expect(await extra.json()).toEqual(userError(422, 'Invalid data.', 'Invalid field note: is not allowed', path, 4));
      const malformed = await answer(uuid, '{');
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toEqual(userError(400, 'Bad Request', 'Malformed request body', path, 4));
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'ACTIVE' });
    });

    test('when another user answers, dismisses or the id is unknown, then 404 code 4', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const res = await answer(uuid, { response: 'accept' }, deviceToken);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(userError(404, 'Not Found', 'Notification not found', `/v1/me/notifications/${uuid}/action`, 4));
      const dismissed = await dismiss(uuid, deviceToken);
      expect(dismissed.status).toBe(404);
      const unknown = crypto.randomUUID();
      expect(await (await answer(unknown, { response: 'accept' })).json()).toEqual(
        userError(404, 'Not Found', 'Notification not found', `/v1/me/notifications/${unknown}/action`, 4),
      );
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'ACTIVE' });
    });

    test('when the user dismisses, then DISMISSED and it leaves the active list for the history', async () => {
      await insertUser(service.ctx.mongo, { userId: 'dismisser' });
      const token = await mintUserToken(service, { userId: 'dismisser', clientId: appClientId });
      const { notification_uuid: uuid } = await created(notificationBody('dismisser'));
      const res = await dismiss(uuid, token);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(SUCCESS(uuid, false));
      expect(await (await meGet('/v1/me/notifications', token)).json()).toEqual({ notifications: [] });
      const history = (await (await meGet('/v1/me/notifications/history', token)).json()) as { history: Record<string, unknown>[] };
      expect(history.history).toEqual([
        {
          notification_uuid: uuid,
          status: 'DISMISSED',
          signing_status: 'NA',
          is_ds_verified: false,
          actions: ACTIONS,
          body: notificationBody('x').body,
          created_at: expect.stringMatching(ISO_RE),
          answered_at: expect.stringMatching(ISO_RE),
        },
      ]);
      const again = await dismiss(uuid, token);
      expect(again.status).toBe(409);
    });

    test('when history is filtered by status, action, keyword, device and dates, then each filter narrows it', async () => {
      const user = await enrollAndActivateWithDevice(service, enterprise, 'historian');
      const token = await mintUserToken(service, { userId: user.userId, clientId: appClientId });
      const make = async (subject: string, message: string) =>
        (
          await created(
            notificationBody(user.userId, {
              body: [
                { lng: 'English', subject, message },
                { lng: 'Deutsch', subject: 'Anmeldung', message: 'Bitte bestätigen' },
              ],
            }),
          )
        ).notification_uuid;
      const paid = await make('Payment of 100 EUR', 'to ACME Corp');
      const login = await make('Login request', 'from Firefox');
      const cancelled = await make('Wire transfer', 'to Initech');
      const pending = await make('Pending one', 'still open');
      expect((await answer(paid, { response: 'accept' }, token)).status).toBe(200);
      expect((await answer(login, { response: 'fraud' }, token)).status).toBe(200);
      expect((await cancel(cancelled)).status).toBe(200);
      const history = async (query: string) =>
        (
          (await (await meGet(`/v1/me/notifications/history?${query}`, token)).json()) as { history: { notification_uuid: string }[] }
        ).history.map((h) => h.notification_uuid);
      expect(await history('')).toEqual([cancelled, login, paid]);
      expect(await history('recordCount=2&startIndex=2')).toEqual([login, paid]);
      expect(await history('notificationStatus=UPDATED')).toEqual([login, paid]);
      expect(await history('notificationStatus=CANCELLED')).toEqual([cancelled]);
      expect(await history('actionPerformed=fraud')).toEqual([login]);
      expect(await history('keywordSearch=acme')).toEqual([paid]);
      expect(await history('keywordSearch=FIREFOX')).toEqual([login]);
      expect(await history('keywordSearch=bestätigen')).toEqual([cancelled, login, paid]);
      expect(await history(`keywordSearch=${encodeURIComponent('.*')}`)).toEqual([]);
      expect(await history(`deviceID=${user.deviceId}`)).toEqual([login, paid]);
      expect(await history('deviceID=other-device')).toEqual([]);
      expect(await history('enterpriseID=default&actionPerformed=&keywordSearch=&deviceID=&notificationStatus=')).toEqual([
        cancelled,
        login,
        paid,
      ]);
      expect(await history(`startDate=${new Date(Date.now() + 60_000).toISOString().slice(0, 19)}UTC`)).toEqual([]);
      const full = (await (await meGet(`/v1/me/notifications/history?actionPerformed=fraud`, token)).json()) as {
        history: Record<string, unknown>[];
      };
      expect(full.history[0]).toMatchObject({ status: 'UPDATED', action: 'fraud', device_id: user.deviceId });
      expect(await history('')).not.toContain(pending);
      const bad = await meGet('/v1/me/notifications/history?notificationStatus=ACTIVE', token);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual(
        userError(
          400,
          'Bad Request',
          'Invalid field notificationStatus: must be one of UPDATED, EXPIRED, TAMPERED, DISMISSED, DISCARD, CANCELLED',
          '/v1/me/notifications/history',
          4,
        ),
      );
    });

    test('when the token is an enterprise token, missing, expired, scope-less, of a deleted or blocked user, then 401/403 with codes 39 and 141', async () => {
      const path = '/v1/me/notifications';
      const enterpriseUse = await meGet(path, enterprise);
      expect(enterpriseUse.status).toBe(401);
      expect(await enterpriseUse.json()).toEqual({
        error: 'invalid_token',
        error_description: `Invalid access token: ${enterprise}`,
        code: 39,
      });
      const missing = await fetch(`${service.url}${path}`);
      expect(missing.status).toBe(401);
      expect(await missing.json()).toEqual({
        error: 'unauthorized',
        error_description: 'Full authentication is required to access this resource',
        code: 39,
      });
      const expired = await mintUserToken(service, { userId: 'plain1', clientId: appClientId, expiresInSeconds: -10 });
      expect(await (await meGet(path, expired)).json()).toEqual({
        error: 'invalid_token',
        error_description: `Invalid access token: ${expired}`,
        code: 39,
      });
      const scopeless = await mintUserToken(service, { userId: 'plain1', clientId: appClientId, scope: 'openid' });
      const scopeRes = await meGet(path, scopeless);
      expect(scopeRes.status).toBe(403);
      expect(await scopeRes.json()).toEqual({
        error: 'insufficient_scope',
        error_description: "The access token does not grant the scope 'notifications'",
        code: 39,
      });
      await insertUser(service.ctx.mongo, { userId: 'deleted2', status: 'DELETED' });
      const deleted = await mintUserToken(service, { userId: 'deleted2', clientId: appClientId });
      expect((await meGet(path, deleted)).status).toBe(401);
      await insertUser(service.ctx.mongo, { userId: 'blocked2' });
      await blockUser(service, 'blocked2');
      const blocked = await mintUserToken(service, { userId: 'blocked2', clientId: appClientId });
      const blockedRes = await meGet(path, blocked);
      expect(blockedRes.status).toBe(403);
      expect(await blockedRes.json()).toEqual({ error: 'user_blocked', error_description: 'User is blocked', code: 141 });
      const unknownClient = await mintUserToken(service, { userId: 'plain1', clientId: 'no-such-client' });
      expect((await meGet(path, unknownClient)).status).toBe(401);
    });

    test('when a signed answer verifies against the device key from activation, then UPDATED, Verified, is_ds_verified true', async () => {
      const { notification_uuid: uuid } = await created(notificationBody(device.userId, { ds_required: true }));
      const listed = (
        (await (await meGet('/v1/me/notifications', deviceToken)).json()) as { notifications: Record<string, unknown>[] }
      ).notifications.find((n) => n.notification_uuid === uuid);
      expect(listed).toMatchObject({ ds_required: true });
      const res = await answer(uuid, { response: 'accept', signature: await signAnswer(device.privateKey, uuid, 'accept') }, deviceToken);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(SUCCESS(uuid, true));
      expect(await (await read(uuid)).json()).toMatchObject({
        status: 'UPDATED',
        action: 'accept',
        signing_status: 'Verified',
        is_ds_verified: true,
      });
    });

    test('when a ds_required answer has no signature, then 422 code 4 and it stays ACTIVE', async () => {
      const { notification_uuid: uuid } = await created(notificationBody(device.userId, { ds_required: true }));
      const res = await answer(uuid, { response: 'accept' }, deviceToken);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        userError(
          422,
          'Invalid data.',
          'Invalid field signature: is required for this notification',
          `/v1/me/notifications/${uuid}/action`,
          4,
        ),
      );
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'ACTIVE' });
    });

    test.each([
      ['signed for another response', async (uuid: string) => signAnswer(device.privateKey, uuid, 'reject')],
      ['signed over another notification', async () => signAnswer(device.privateKey, crypto.randomUUID(), 'accept')],
      [
        'one byte flipped',
        async (uuid: string) => {
          const raw = Buffer.from(await signAnswer(device.privateKey, uuid, 'accept'), 'base64url');
          raw[10] ^= 1;
          return raw.toString('base64url');
        },
      ],
      ['not base64url of 64 bytes', async () => 'abc'],
    ])('when the signature is %s, then TAMPERED, Failed, 422 code 4, and no later answer is accepted', async (_label, makeSignature) => {
      const { notification_uuid: uuid } = await created(notificationBody(device.userId, { ds_required: true }));
      const res = await answer(uuid, { response: 'accept', signature: await makeSignature(uuid) }, deviceToken);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(
        userError(
          422,
          'Invalid data.',
          'Invalid field signature: does not verify against the registered device key; the notification is TAMPERED',
          `/v1/me/notifications/${uuid}/action`,
          4,
        ),
      );
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'TAMPERED', signing_status: 'Failed', is_ds_verified: false });
      const retry = await answer(uuid, { response: 'accept', signature: await signAnswer(device.privateKey, uuid, 'accept') }, deviceToken);
      expect(retry.status).toBe(409);
    });

    test('when the matching number is right, then UPDATED; when missing for approving (the first action), 422 telling what to do, nothing counted', async () => {
      const { notification_uuid: uuid, number } = await created(notificationBody('plain1', { numberMatch: true }));
      const missing = await answer(uuid, { response: 'accept' });
      expect(missing.status).toBe(422);
      expect(await missing.json()).toEqual(
        userError(
          422,
          'Invalid data.',
          'Invalid field number: is required for this answer; type the two-digit number shown where the request was made',
          `/v1/me/notifications/${uuid}/action`,
          4,
        ),
      );
      const right = await answer(uuid, { response: 'accept', number });
      expect(right.status).toBe(200);
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'UPDATED', action: 'accept' });
      const stored = await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean();
      expect(stored).toMatchObject({ numberAttempts: 0 });
    });

    test.each(['reject', 'fraud'])(
      'when a person being push-bombed answers %s without the number, then 200 and UPDATED (saying no never needs the number)',
      async (response) => {
        const { notification_uuid: uuid } = await created(notificationBody('plain1', { numberMatch: true }));
        const res = await answer(uuid, { response });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(SUCCESS(uuid, false));
        expect(await (await read(uuid)).json()).toMatchObject({ status: 'UPDATED', action: response });
      },
    );

    test('when actions say requiresNumber, then exactly those need the number, and the active list tells the app which', async () => {
      const actions = [
        { label: 'Open the door', action: 'open', authlevel: 1, requiresNumber: false },
        { label: 'Transfer', action: 'transfer', authlevel: 2, requiresNumber: true },
        { label: 'Decline', action: 'decline', authlevel: 1 },
      ];
      const { notification_uuid: uuid, number } = await created(notificationBody('plain1', { numberMatch: true, actions }));
      const listed = (await (await meGet('/v1/me/notifications')).json()) as { notifications: Record<string, unknown>[] };
      expect(listed.notifications.find((n) => n.notification_uuid === uuid)).toMatchObject({
        number_match: true,
        actions: [
          { label: 'Open the door', action: 'open', authlevel: 1, requiresNumber: false },
          { label: 'Transfer', action: 'transfer', authlevel: 2, requiresNumber: true },
          { label: 'Decline', action: 'decline', authlevel: 1, requiresNumber: false },
        ],
      });
      expect((await answer(uuid, { response: 'transfer' })).status).toBe(422);
      expect((await answer(uuid, { response: 'transfer', number })).status).toBe(200);
      const second = await created(notificationBody('plain1', { numberMatch: true, actions }));
      expect((await answer(second.notification_uuid, { response: 'open' })).status).toBe(200);
      // Without number matching no action needs a number, whatever the actions say.
      const plain = await created(notificationBody('plain1', { actions }));
      expect((await answer(plain.notification_uuid, { response: 'transfer' })).status).toBe(200);
    });

    test('when a wrong number is sent three times, then 422 says what to do and how many tries are left, and the third ends it TAMPERED; the right number is refused after', async () => {
      const { notification_uuid: uuid, number } = await created(notificationBody('plain1', { numberMatch: true }));
      const wrong = String((Number(number) + 1) % 100).padStart(2, '0');
      const path = `/v1/me/notifications/${uuid}/action`;
      for (const triesLeft of [2, 1]) {
        const res = await answer(uuid, { response: 'accept', number: wrong });
        expect(res.status).toBe(422);
        expect(await res.json()).toEqual(
          userError(
            422,
            'Invalid data.',
            `Invalid field number: does not match the number shown where the request was made; check it and type it again (${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left)`,
            path,
            4,
            { triesLeft },
          ),
        );
      }
      const third = await answer(uuid, { response: 'accept', number: wrong });
      expect(await third.json()).toEqual(
        userError(
          422,
          'Invalid data.',
          'Invalid field number: does not match, and no tries are left; the request is stopped (TAMPERED): if you made it, start it again',
          path,
          4,
          { triesLeft: 0 },
        ),
      );
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'TAMPERED', signing_status: 'NA' });
      const right = await answer(uuid, { response: 'accept', number });
      expect(right.status).toBe(409);
      expect(await right.json()).toEqual(
        userError(409, 'Conflict', 'Notification is TAMPERED', path, 4, { notificationStatus: 'TAMPERED' }),
      );
    });

    test('when a device sends the third wrong number, then the TAMPERED notification names that device in the history, as one ended on a bad signature does', async () => {
      const historyOf = async (uuid: string) => {
        const res = await meGet('/v1/me/notifications/history?notificationStatus=TAMPERED', deviceToken);
        return ((await res.json()) as { history: Record<string, unknown>[] }).history.find((h) => h.notification_uuid === uuid);
      };
      const { notification_uuid: uuid, number } = await created(notificationBody(device.userId, { numberMatch: true }));
      const wrong = String((Number(number) + 3) % 100).padStart(2, '0');
      for (let i = 0; i < 3; i++) expect((await answer(uuid, { response: 'accept', number: wrong }, deviceToken)).status).toBe(422);
      expect(await historyOf(uuid)).toMatchObject({ status: 'TAMPERED', signing_status: 'NA', device_id: device.deviceId });

      const signed = await created(notificationBody(device.userId, { ds_required: true }));
      const badSignature = await signAnswer(device.privateKey, signed.notification_uuid, 'reject');
      expect((await answer(signed.notification_uuid, { response: 'accept', signature: badSignature }, deviceToken)).status).toBe(422);
      expect(await historyOf(signed.notification_uuid)).toMatchObject({
        status: 'TAMPERED',
        signing_status: 'Failed',
        device_id: device.deviceId,
      });
    });

    test('when ten wrong numbers race, then exactly three are counted and it ends TAMPERED once', async () => {
      const { notification_uuid: uuid, number } = await created(notificationBody('plain1', { numberMatch: true }));
      const wrong = String((Number(number) + 7) % 100).padStart(2, '0');
      const results = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const res = await answer(uuid, { response: 'accept', number: wrong });
          return { status: res.status, message: ((await res.json()) as { message: string }).message };
        }),
      );
      expect(results.filter((r) => r.message.includes('tries left') || r.message.includes('try left'))).toHaveLength(2);
      expect(results.filter((r) => r.message.includes('the request is stopped (TAMPERED)'))).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(7);
      const stored = await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean();
      expect(stored).toMatchObject({ status: 'TAMPERED', numberAttempts: 3 });
    });
  });

  describe('races (one conditional write decides)', () => {
    test('when 20 answers arrive at once, then exactly one is UPDATED and 19 get 409', async () => {
      const { notification_uuid: uuid } = await created(notificationBody('plain1'));
      const responses = ['accept', 'reject', 'fraud'];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          answer(uuid, { response: responses[i % 3] }).then(async (r) => ({
            status: r.status,
            body: (await r.json()) as Record<string, unknown>,
          })),
        ),
      );
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(19);
      const record = (await (await read(uuid)).json()) as { status: string; action: string };
      expect(record.status).toBe('UPDATED');
      expect(results.every((r) => r.status === 200 || r.body.notificationStatus === 'UPDATED')).toBe(true);
      // Every loser is told the answer that won, so the one that sent the same answer recognises it.
      expect(results.every((r) => r.status === 200 || r.body.action === record.action)).toBe(true);
    });

    test('when answers, a dismiss and a cancel race, then exactly one of them wins and the record says which', async () => {
      for (let round = 0; round < 5; round++) {
        const { notification_uuid: uuid } = await created(notificationBody('plain1'));
        const calls = [
          ...Array.from({ length: 5 }, () => answer(uuid, { response: 'accept' }).then((r) => ({ who: 'UPDATED', status: r.status }))),
          dismiss(uuid).then((r) => ({ who: 'DISMISSED', status: r.status })),
          cancel(uuid).then((r) => ({ who: 'CANCELLED', status: r.status })),
        ];
        const results = await Promise.all(calls);
        const winners = results.filter((r) => r.status === 200);
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.status === 409)).toHaveLength(results.length - 1);
        expect(await (await read(uuid)).json()).toMatchObject({ status: winners[0].who });
      }
    });
  });

  describe('expiry enforced at answer time (no worker running)', () => {
    // A service whose clock runs 15.5 s behind: what it creates with the minimum expiresIn (15 s)
    // fell due half a second ago on the real clock, and no worker has expired it.
    const alreadyDue = () => notificationsServiceOver(service, { now: () => new Date(Date.now() - 15_500) });

    test('when a user answers after expiresAt while the record still says ACTIVE, then 410 and the record becomes EXPIRED', async () => {
      const { notificationUuid: uuid } = await alreadyDue().create(
        { clientId: enterpriseClientId, enterpriseId: 'default' },
        { ...(notificationBody('plain1') as unknown as CreateNotificationInput), expiresIn: 15 },
      );
      const stored = await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean();
      expect(stored?.status).toBe('ACTIVE');
      expect(await (await read(uuid)).json()).toMatchObject({ status: 'EXPIRED' });
      expect(
        ((await (await meGet('/v1/me/notifications')).json()) as { notifications: { notification_uuid: string }[] }).notifications.map(
          (n) => n.notification_uuid,
        ),
      ).not.toContain(uuid);
      const res = await answer(uuid, { response: 'accept' });
      expect(res.status).toBe(410);
      expect(await res.json()).toEqual(
        userError(410, 'Gone', 'Notification expired', `/v1/me/notifications/${uuid}/action`, 4, { notificationStatus: 'EXPIRED' }),
      );
      expect(await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean()).toMatchObject({
        status: 'EXPIRED',
      });
      const cancelled = await cancel(uuid);
      expect(cancelled.status).toBe(409);
      expect(await cancelled.json()).toMatchObject({ message: 'Notification is EXPIRED', notificationStatus: 'EXPIRED' });
      expect((await dismiss(uuid)).status).toBe(410);
    });
    test('when the enterprise reads a notification past expiresAt that no worker has expired yet, then it reads EXPIRED with answeredAt, the moment it expired', async () => {
      // answeredAt is documented for every final state; a ?wait= that wakes at expiresAt always
      // reads the record before any worker has written it.
      const { notificationUuid: uuid } = await alreadyDue().create(
        { clientId: enterpriseClientId, enterpriseId: 'default' },
        { ...(notificationBody('plain1') as unknown as CreateNotificationInput), expiresIn: 15 },
      );
      const stored = await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean();
      expect(stored?.status).toBe('ACTIVE');
      const seen = (await (await read(uuid)).json()) as Record<string, unknown>;
      expect(seen).toMatchObject({ status: 'EXPIRED', expiresAt: stored?.expiresAt.toISOString() });
      expect(seen.answeredAt).toBe(seen.expiresAt);
    });
  });

  describe('deleting a user', () => {
    test('when a user is deleted, then their pending notifications end DISCARD, answered ones stay, and new ones are refused', async () => {
      await insertUser(service.ctx.mongo, { userId: 'leaver' });
      const token = await mintUserToken(service, { userId: 'leaver', clientId: appClientId });
      const answered = (await created(notificationBody('leaver'))).notification_uuid;
      expect((await answer(answered, { response: 'accept' }, token)).status).toBe(200);
      const pending = [
        (await created(notificationBody('leaver'))).notification_uuid,
        (await created(notificationBody('leaver'))).notification_uuid,
      ];
      const other = (await created(notificationBody('plain1'))).notification_uuid;
      const res = await fetch(`${service.url}/v1/users/leaver`, { method: 'DELETE', headers: { authorization: `Bearer ${enterprise}` } });
      expect(res.status).toBe(204);
      for (const uuid of pending)
        expect(await (await read(uuid)).json()).toMatchObject({ status: 'DISCARD', answeredAt: expect.stringMatching(ISO_RE) });
      expect(await (await read(answered)).json()).toMatchObject({ status: 'UPDATED' });
      expect(await (await read(other)).json()).toMatchObject({ status: 'ACTIVE' });
      expect((await create(notificationBody('leaver'))).status).toBe(404);
      expect((await meGet('/v1/me/notifications', token)).status).toBe(401);
    });

    test('when an admin blocks a user, then their pending notifications end DISCARD, new ones are refused, their token gets 403 code 141, and the block is in the activity record', async () => {
      await insertUser(service.ctx.mongo, { userId: 'suspect' });
      const token = await mintUserToken(service, { userId: 'suspect', clientId: appClientId });
      const pending = (await created(notificationBody('suspect'))).notification_uuid;
      await blockUser(service, 'suspect');
      expect(await (await read(pending)).json()).toMatchObject({ status: 'DISCARD' });
      expect((await create(notificationBody('suspect'))).status).toBe(404);
      const refused = await meGet('/v1/me/notifications', token);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: 'user_blocked', error_description: 'User is blocked', code: 141 });
      const activity = await fetch(`${service.url}/admin/activity?userId=suspect`, {
        headers: { authorization: `Bearer ${service.env.ADMIN_TOKEN}` },
      });
      const { activity: entries } = (await activity.json()) as { activity: { action: string; actor: unknown; enterpriseId: string }[] };
      expect(entries[0]).toMatchObject({ action: 'user.blocked', actor: { type: 'admin' }, enterpriseId: 'default' });
    });
  });
});
