import { createECDH, randomBytes, randomUUID } from 'node:crypto';
import {
  ClientLibraryError,
  SvcIdentityError,
  MemoryDeviceKeyStore,
  NotificationClient,
  SignIn,
  createDeviceKey,
  deviceRegistration,
  type EventPayload,
  type HistoryRecord,
  type Notification,
  type TokenSet,
  type UpdateAcknowledgement,
} from '@svc-identity/client';
import { registerClient } from '../../core/clients/clients.service.js';
import { appendUserEvent } from '../../core/notifications/notification-user-events.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { blockUser, notificationBody } from '../support/notification-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const REDIRECT_URI = 'http://127.0.0.1/approver/callback';
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T/;

/**
 * The client library (@svc-identity/client, its public API only) against a running service: the
 * sign-in helper through the real login pages, the device key through activation, and every
 * notification operation with its promise, its event and every result code.
 */
describe('client library against the running service', () => {
  let service: TestService;
  let worker: RunningWorker;
  let enterprise: string;
  let appClientId: string;
  const requests: string[] = [];
  /** Requests whose answer (status and headers) reached the library. */
  const answered: string[] = [];

  beforeAll(async () => {
    // One person answers every notification of this file: more than the default 10 a user may be sent.
    service = await startTestService('clientlib', { RATE_LIMIT_NOTIFICATIONS_PER_USER: '50' }, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    await createGroups(service, ['retail']);
    enterprise = (await createClientWithToken(service, { scopes: ['users', 'notifications'] })).accessToken;
    appClientId = (
      await registerClient(service.services.clients, { name: 'Approver', scopes: [], public: true, redirectUris: [REDIRECT_URI] })
    ).client.clientId;
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  /** A person with this device's key: enrolled by the enterprise, activated with the library's key, signed in with the library. */
  async function signedInPerson(userId: string) {
    const code = `CODE-${userId}`;
    expect((await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody(userId, { predefinedCode: code }))).status).toBe(201);
    const deviceKeys = new MemoryDeviceKeyStore();
    const keys = await createDeviceKey();
    await deviceKeys.save(keys);
    const deviceId = `device-${userId}`;
    const activated = await sendJson(`${service.url}/v1/users/activate`, 'POST', undefined, {
      userId,
      activationCode: code,
      device: await deviceRegistration(keys, deviceId),
    });
    expect(activated.status).toBe(200);

    const signIn = new SignIn({ serviceUrl: service.url, clientId: appClientId, redirectUri: REDIRECT_URI, allowInsecureHttp: true });
    const { url, pending } = await signIn.start();
    const redirectedTo = await signInWithForms(service, new FormWalker(service.url), url, userId, `${userId}@example.com`);
    const tokens: TokenSet = await signIn.finish(redirectedTo, pending);
    // Every request the library makes goes through this fetch, so tests can see that none was made.
    const countingFetch: typeof fetch = async (input, init) => {
      requests.push(String(input));
      const res = await fetch(input, init);
      answered.push(String(input));
      return res;
    };
    const client = new NotificationClient({
      serviceUrl: service.url,
      getAccessToken: signIn.accessTokenProvider(tokens),
      deviceKeys,
      fetch: countingFetch,
    });
    return { client, tokens, signIn, deviceId, userId, deviceKeys };
  }

  /** The next event of that name, and the promise of the call that emits it. */
  function nextEvent<T>(client: NotificationClient, name: string): Promise<T> {
    return new Promise((resolve) => client.once(name as 'error', (payload) => resolve(payload as T)));
  }

  async function notify(userId: string, overrides: Record<string, unknown> = {}): Promise<{ uuid: string; number?: string }> {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(userId, overrides));
    expect(res.status).toBe(201);
    const body = (await res.json()) as { notification_uuid: string; number?: string };
    return { uuid: body.notification_uuid, ...(body.number ? { number: body.number } : {}) };
  }

  const enterpriseView = async (uuid: string) =>
    (await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } })).json();

  let person: Awaited<ReturnType<typeof signedInPerson>>;
  beforeAll(async () => {
    person = await signedInPerson('lib-ada');
  }, 60000);

  test('when the app signs in with the library, then it holds a user token the service accepts', async () => {
    expect(person.tokens.accessToken).toEqual(expect.any(String));
    expect(person.tokens.expiresAt).toBeGreaterThan(Date.now());
    const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${person.tokens.accessToken}` } });
    expect(await me.json()).toMatchObject({ userId: 'lib-ada', status: 'ACTIVE', device: { deviceId: person.deviceId } });
  });

  test('when the library refreshes, then it gets a new access token and a rotated refresh token, and the old refresh token is refused', async () => {
    const extra = await signedInPerson('lib-cy');
    expect(extra.tokens.refreshToken).toEqual(expect.any(String));
    const renewed = await extra.signIn.refresh(extra.tokens.refreshToken as string);
    expect(renewed.accessToken).not.toBe(extra.tokens.accessToken);
    expect(renewed.refreshToken).not.toBe(extra.tokens.refreshToken);
    const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${renewed.accessToken}` } });
    expect(me.status).toBe(200);
    // A reused refresh token is invalid_grant: the library's one error type says to sign in again.
    const reused = await extra.signIn.refresh(extra.tokens.refreshToken as string).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(SvcIdentityError);
    expect(reused).toMatchObject({ kind: 'sign-in-again', operation: 'Refresh', details: { error: 'invalid_grant' } });
  }, 60000);

  test('when GetNotifications is called positionally, then the event and the promise carry the same response.ResponseData, newest first, paged', async () => {
    const first = await notify('lib-ada', { body: [{ lng: 'English', subject: 'First', message: 'one' }] });
    const second = await notify('lib-ada', { body: [{ lng: 'English', subject: 'Second', message: 'two' }] });
    const event = nextEvent<EventPayload<{ notifications: Notification[] }>>(person.client, 'onGetNotifications');
    const result = await person.client.getNotifications(0, '', 1, '', '');
    expect(await event).toEqual(result);
    const uuids = result.response.ResponseData.notifications.map((n) => n.notification_uuid);
    expect(uuids.indexOf(second.uuid)).toBeLessThan(uuids.indexOf(first.uuid));
    expect(result.response.ResponseData.notifications.find((n) => n.notification_uuid === first.uuid)).toMatchObject({
      ds_required: false,
      actions: expect.any(Array),
      body: [{ lng: 'English', subject: 'First', message: 'one' }],
    });
    const page = await person.client.getNotifications(1, '', 2, '', '');
    expect(page.response.ResponseData.notifications.map((n) => n.notification_uuid)).toEqual([uuids[1]]);
    const future = await person.client.getNotifications(0, '', 1, '2099-01-01T00:00:00UTC', '2099-12-31T00:00:00+05:30');
    expect(future.response.ResponseData.notifications).toEqual([]);
    // A Date and a toISOString() text (milliseconds) reach the service in a form it takes, and
    // the range widened to whole seconds still holds notifications created within it.
    const recent = await person.client.getNotifications(0, '', 1, new Date(Date.now() - 3_600_000), new Date().toISOString());
    expect(recent.response.ResponseData.notifications.map((n) => n.notification_uuid)).toEqual(
      expect.arrayContaining([first.uuid, second.uuid]),
    );
    const mixed = await person.client.getNotifications(0, '', 1, '2026-01-01T05:30:00+0530', '2099-01-01T00:00:00 GMT');
    expect(mixed.response.ResponseData.notifications.map((n) => n.notification_uuid)).toContain(first.uuid);
  });

  test('when the service sends a change again (at least once), then watchNotifications emits it once', async () => {
    const watcher = await signedInPerson('lib-watch');
    const created: string[] = [];
    watcher.client.on('onNotificationCreated', (change) => created.push(change.notification_uuid));
    const answeredBefore = answered.length;
    const watch = watcher.client.watchNotifications();
    try {
      // The stream's head has reached the library: the service has fixed where the stream starts,
      // so the next notification is on it (a stream merely registered may not have yet).
      await eventually(async () =>
        answered.slice(answeredBefore).some((url) => url.endsWith('/v1/me/notifications/stream')) ? true : undefined,
      );
      const first = await notify('lib-watch');
      await eventually(async () => (created.length === 1 ? true : undefined));
      // What the notification worker does for a change whose mark was not cleared: the same event again.
      await appendUserEvent(service.ctx.redis, service.config.queuePrefix, DEFAULT_ENTERPRISE_ID, 'lib-watch', {
        type: 'created',
        notification_uuid: first.uuid,
        status: 'ACTIVE',
      });
      const second = await notify('lib-watch');
      await eventually(async () => (created.includes(second.uuid) ? true : undefined));
      expect(created).toEqual([first.uuid, second.uuid]);
    } finally {
      watch.stop();
    }
  }, 60000);

  test('when UpdateNotification answers an unsigned notification, then the event says Success and the enterprise sees UPDATED with signature NA', async () => {
    const { uuid } = await notify('lib-ada');
    const event = nextEvent<EventPayload<UpdateAcknowledgement>>(person.client, 'onUpdateNotification');
    const result = await person.client.updateNotification(uuid, 'reject');
    expect(await event).toEqual({
      response: { ResponseData: { status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: false } },
    });
    expect(result).toEqual(await event);
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'reject', signing_status: 'NA', is_ds_verified: false });
  });

  test('when a notification requires a signature, then the library signs with the device key and the enterprise sees Verified', async () => {
    const { uuid } = await notify('lib-ada', { ds_required: true });
    const result = await person.client.updateNotification(uuid, 'accept');
    expect(result.response.ResponseData).toEqual({ status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: true });
    expect(await enterpriseView(uuid)).toMatchObject({
      status: 'UPDATED',
      action: 'accept',
      signing_status: 'Verified',
      is_ds_verified: true,
    });
  });

  test('when a notification asks for number matching, then Reject without the number is sent and accepted (saying no never needs it)', async () => {
    const { uuid } = await notify('lib-ada', { numberMatch: true });
    const listed = await person.client.getNotifications(0, '', 1, '', '');
    expect(
      listed.response.ResponseData.notifications.find((n) => n.notification_uuid === uuid)?.actions.map((a) => a.requiresNumber),
    ).toEqual([true, false, false]);
    const ok = await person.client.updateNotification(uuid, 'reject');
    expect(ok.response.ResponseData).toMatchObject({ status_code: 100, notification_uuid: uuid });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'reject' });
  });

  test('when a notification asks for number matching, then no number is code 4 before the answer is sent, a wrong one is refused, the right one is accepted', async () => {
    const { uuid, number } = await notify('lib-ada', { numberMatch: true });
    expect(number).toMatch(/^[0-9]{2}$/);
    await person.client.getNotifications(0, '', 1, '', '');
    const before = requests.length;
    const missing = nextEvent<ClientLibraryError>(person.client, 'error');
    await expect(person.client.updateNotification(uuid, 'accept')).rejects.toMatchObject({ code: 4 });
    expect((await missing).code).toBe(4);
    expect(requests.length).toBe(before);
    await expect(person.client.updateNotification(uuid, 'accept', number === '00' ? '01' : '00')).rejects.toMatchObject({
      code: 4,
      status: 422,
    });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'ACTIVE' });
    const ok = await person.client.updateNotification(uuid, 'accept', number);
    expect(ok.response.ResponseData).toMatchObject({ status_code: 100, notification_uuid: uuid });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'accept' });
  });

  test('when an answer was stored but its reply was lost, then sending it again resolves Success with repeated: true, and another answer is still refused', async () => {
    const { uuid, number } = await notify('lib-ada', { ds_required: true, numberMatch: true });
    // The network drops the reply to the first answer after the service stored it.
    let loseNextAnswerReply = true;
    const flakyFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (loseNextAnswerReply && init?.method === 'POST' && String(input).endsWith('/action')) {
        loseNextAnswerReply = false;
        await res.body?.cancel();
        throw new TypeError('fetch failed: the connection was reset');
      }
      return res;
    };
    const phone = new NotificationClient({
      serviceUrl: service.url,
      getAccessToken: () => person.tokens.accessToken,
      deviceKeys: person.deviceKeys,
      fetch: flakyFetch,
    });
    await phone.getNotifications(0, '', 1, '', '');
    await expect(phone.updateNotification(uuid, 'accept', number)).rejects.toMatchObject({ kind: 'network' });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'accept', is_ds_verified: true });

    // The retry: signed again (a new signature) with the number; the stored answer is what counts.
    const event = nextEvent<EventPayload<UpdateAcknowledgement>>(phone, 'onUpdateNotification');
    const repeated = await phone.updateNotification(uuid, 'accept', number);
    const acknowledgement = { status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: true, repeated: true };
    expect(repeated.response.ResponseData).toEqual(acknowledgement);
    expect(await event).toEqual(repeated);
    // An app started afresh (it has not listed the notification) is told the same.
    const restarted = await person.client.updateNotification(uuid, 'accept', number);
    expect(restarted.response.ResponseData).toEqual(acknowledgement);

    // Another device of the user answering otherwise is refused: its answer was not the one stored.
    const other = await person.client.updateNotification(uuid, 'reject').catch((e: unknown) => e);
    expect(other).toBeInstanceOf(SvcIdentityError);
    expect(other).toMatchObject({
      kind: 'refused',
      code: 4,
      status: 409,
      message: 'Notification is UPDATED',
      details: { notificationStatus: 'UPDATED', action: 'accept', is_ds_verified: true },
    });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'accept' });
  });

  test('when a notification ended without an answer (cancelled, dismissed), then answering it is still refused with 409', async () => {
    const cancelled = await notify('lib-ada');
    const res = await fetch(`${service.url}/v1/notifications/${cancelled.uuid}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${enterprise}` },
    });
    expect(res.status).toBe(200);
    await expect(person.client.updateNotification(cancelled.uuid, 'accept')).rejects.toMatchObject({
      kind: 'refused',
      status: 409,
      details: { notificationStatus: 'CANCELLED' },
    });
    const dismissed = await notify('lib-ada');
    const dismissal = await fetch(`${service.url}/v1/me/notifications/${dismissed.uuid}/dismiss`, {
      method: 'POST',
      headers: { authorization: `Bearer ${person.tokens.accessToken}` },
    });
    expect(dismissal.status).toBe(200);
    await expect(person.client.updateNotification(dismissed.uuid, 'reject')).rejects.toMatchObject({
      status: 409,
      details: { notificationStatus: 'DISMISSED' },
    });
  });

  test('when the user dismisses with the library, then the event says Success, the enterprise sees DISMISSED, and dismissing again resolves repeated', async () => {
    const { uuid } = await notify('lib-ada');
    const event = nextEvent<EventPayload<UpdateAcknowledgement>>(person.client, 'onDismissNotification');
    const first = await person.client.dismissNotification(uuid);
    expect(await event).toEqual(first);
    expect(first.response.ResponseData).toEqual({ status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: false });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'DISMISSED' });
    const pending = await person.client.getNotifications(0, '', 1, '', '');
    expect(pending.response.ResponseData.notifications.map((n) => n.notification_uuid)).not.toContain(uuid);

    // The reply to the first attempt lost, or another of the user's devices dismissed it first.
    const again = await person.client.dismissNotification(uuid);
    expect(again.response.ResponseData).toEqual({
      status_code: 100,
      message: 'Success',
      notification_uuid: uuid,
      is_ds_verified: false,
      repeated: true,
    });
  });

  test("when a notification was answered or is not the user's, then dismissing it is refused (409 naming the answer, 404)", async () => {
    const { uuid } = await notify('lib-ada');
    await person.client.updateNotification(uuid, 'reject');
    await expect(person.client.dismissNotification(uuid)).rejects.toMatchObject({
      operation: 'DismissNotification',
      kind: 'refused',
      code: 4,
      status: 409,
      details: { notificationStatus: 'UPDATED', action: 'reject' },
    });
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'reject' });

    const other = await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody('lib-dee', { predefinedCode: 'CODE-lib-dee' }));
    expect(other.status).toBe(201);
    const someoneElses = await notify('lib-dee');
    await expect(person.client.dismissNotification(someoneElses.uuid)).rejects.toMatchObject({ code: 4, status: 404 });
    expect(await enterpriseView(someoneElses.uuid)).toMatchObject({ status: 'ACTIVE' });
    const before = requests.length;
    await expect(person.client.dismissNotification('not-a-uuid')).rejects.toMatchObject({ kind: 'refused', code: 4, status: undefined });
    expect(requests.length).toBe(before);
  });

  test('when GetNotificationHistory is called with its nine positional filters, then the event carries the matching final records', async () => {
    const { uuid } = await notify('lib-ada', {
      body: [{ lng: 'English', subject: 'Wire transfer', message: 'Approve 500 EUR?' }],
      ds_required: true,
    });
    await person.client.updateNotification(uuid, 'fraud');
    const event = nextEvent<EventPayload<{ history: HistoryRecord[] }>>(person.client, 'onGetNotificationsHistory');
    const result = await person.client.getNotificationHistory(10, '', 1, '', '', 'UPDATED', 'fraud', 'Wire', person.deviceId);
    expect(await event).toEqual(result);
    expect(result.response.ResponseData.history).toEqual([
      expect.objectContaining({
        notification_uuid: uuid,
        status: 'UPDATED',
        action: 'fraud',
        signing_status: 'Verified',
        device_id: person.deviceId,
        answered_at: expect.stringMatching(ISO_DATE),
      }),
    ]);
    const none = await person.client.getNotificationHistory(10, '', 1, '', '', 'EXPIRED', '', '', '');
    expect(none.response.ResponseData.history.map((h) => h.notification_uuid)).not.toContain(uuid);
  });

  test.each([
    ['GetNotifications with a negative recordCount', (c: NotificationClient) => c.getNotifications(-1, '', 1, '', '')],
    ['GetNotifications with startIndex 0', (c: NotificationClient) => c.getNotifications(0, '', 0, '', '')],
    ['GetNotifications with a date that is not a date', (c: NotificationClient) => c.getNotifications(0, '', 1, '2026-13-45', '')],
    ['GetNotifications with an invalid Date', (c: NotificationClient) => c.getNotifications(0, '', 1, new Date(Number.NaN), '')],
    [
      'GetNotificationHistory with an unknown status',
      (c: NotificationClient) => c.getNotificationHistory(0, '', 1, '', '', 'ACTIVE', '', '', ''),
    ],
    ['UpdateNotification with an id that is not a UUID', (c: NotificationClient) => c.updateNotification('not-a-uuid', 'accept')],
    ['UpdateNotification with an empty response', (c: NotificationClient) => c.updateNotification(randomUUID(), '')],
  ])('when %s, then an error event with code 4 and no request', async (_label, call) => {
    const before = requests.length;
    const error = nextEvent<ClientLibraryError>(person.client, 'error');
    await expect(call(person.client)).rejects.toBeInstanceOf(ClientLibraryError);
    expect(await error).toMatchObject({ code: 4 });
    expect(requests.length).toBe(before);
  });

  test('when the notification is unknown, then code 4 with the service message; when the token is not a user token, then code 39', async () => {
    await person.client.getNotifications(0, '', 1, '', '');
    await expect(person.client.updateNotification(randomUUID(), 'accept')).rejects.toMatchObject({ code: 4, status: 404, kind: 'refused' });
    const stranger = new NotificationClient({ serviceUrl: service.url, getAccessToken: () => enterprise });
    const error = nextEvent<ClientLibraryError>(stranger, 'error');
    await expect(stranger.getNotifications(0, '', 1, '', '')).rejects.toMatchObject({ code: 39, status: 401, kind: 'sign-in-again' });
    expect((await error).message).toBe(`Invalid access token: ${enterprise}`);
  });

  test('when the app registers and unregisters a browser push subscription through the library, then the service holds it in between', async () => {
    const pusher = await signedInPerson('lib-push');
    expect(Buffer.from(await pusher.client.getPushKey(), 'base64url')).toHaveLength(65);
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const json = {
      endpoint: 'https://push.example.com/send/lib-push',
      expirationTime: null,
      keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
    };
    // What a browser hands over: a PushSubscription object, read through its toJSON().
    const browserSubscription = { endpoint: json.endpoint, toJSON: () => json };
    const registered = await pusher.client.registerPushSubscription(browserSubscription);
    expect(registered).toMatchObject({ endpoint: json.endpoint, subscription_id: expect.any(String) as unknown });
    expect(await pusher.client.registerPushSubscription(json)).toMatchObject({ subscription_id: registered.subscription_id });

    expect(await pusher.client.unregisterPushSubscription(browserSubscription)).toBe(true);
    expect(await pusher.client.unregisterPushSubscription(json.endpoint)).toBe(false);
    await expect(pusher.client.registerPushSubscription({ ...json, endpoint: 'https://10.0.0.1/push' })).rejects.toMatchObject({
      operation: 'RegisterPushSubscription',
      code: 4,
      status: 422,
      kind: 'refused',
      message: 'Invalid field endpoint: must reach a public address (10.0.0.1 is in the private range)',
    });
  }, 60000);

  test('when an admin blocks the user, then every operation ends in an error event with code 141 and the service message', async () => {
    const blocked = await signedInPerson('lib-bob');
    const { uuid } = await notify('lib-bob');
    await blockUser(service, 'lib-bob');
    const error = nextEvent<ClientLibraryError>(blocked.client, 'error');
    await expect(blocked.client.getNotifications(0, '', 1, '', '')).rejects.toMatchObject({ code: 141, status: 403, kind: 'refused' });
    expect(await error).toMatchObject({ code: 141, message: 'User is blocked' });
    await expect(blocked.client.updateNotification(uuid, 'accept')).rejects.toMatchObject({ code: 141 });
    await expect(blocked.client.dismissNotification(uuid)).rejects.toMatchObject({ code: 141, status: 403 });
    await expect(blocked.client.getNotificationHistory(0, '', 1, '', '', '', '', '', '')).rejects.toMatchObject({ code: 141 });
  }, 60000);
});
