import { randomBytes, randomUUID, webcrypto } from 'node:crypto';
import { registerClient } from '../../core/clients/clients.service.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import { createNotificationsService, type NotificationsDeps } from '../../core/notifications/notifications.service.js';
import { enqueueCallback, enqueueExpiry } from '../../core/platform/queues/notification.queue.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { accountIdOf } from '../../core/sign-in/sign-in-users.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { memoryLogger, type TestService } from './test-service.js';
import { sendJson, userBody } from './users-helpers.js';

/**
 * A notifications service of the test's own over the running service's stores and queues, with the API's callback
 * policy: `overrides` sets what the test needs otherwise (a clock set back, stores that pause, another policy).
 */
export function notificationsServiceOver(service: Pick<TestService, 'ctx' | 'config'>, overrides: Partial<NotificationsDeps> = {}) {
  return createNotificationsService({
    repository: createNotificationsRepository(service.ctx.mongo),
    users: createUsersRepository(service.ctx.mongo),
    enqueueExpiry: (uuid, at) => enqueueExpiry(service.ctx.queues.notification, uuid, at),
    enqueueCallback: (uuid) => enqueueCallback(service.ctx.queues['notification-callback'], uuid),
    logger: memoryLogger().logger,
    callbackPolicy: service.config.notifications.callbackAddresses,
    ...overrides,
  });
}

/** A public client standing for the approver app users sign in through (of the default enterprise unless told). */
export async function registerAppClient(
  service: Pick<TestService, 'services'>,
  { name = 'approver app', enterpriseId }: { name?: string; enterpriseId?: string } = {},
): Promise<string> {
  const { client } = await registerClient(service.services.clients, {
    name,
    ...(enterpriseId === undefined ? {} : { enterpriseId }),
    scopes: ['notifications'],
    public: true,
    redirectUris: ['http://127.0.0.1/cb'],
  });
  return client.clientId;
}

/**
 * A user access token as the authorization server stores the ones it issues for the authorization
 * code flow: an opaque value whose record (user, app, scope, expiry) the API looks up on every use.
 * The sign-in that issues such tokens is tested through the pages in e2e/sign-in and by the client
 * library's tests; these tests are about what the token lets the user do.
 */
export async function mintUserToken(
  service: Pick<TestService, 'services'>,
  /** `signedInAt`: the sign-in time (epoch seconds) recorded with the token, as a real sign-in records it; none by default. */
  options: { userId: string; clientId: string; scope?: string; expiresInSeconds?: number; signedInAt?: number },
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  // The account is the user in the enterprise of the app signed in to, as at sign-in.
  const client = await service.services.clientLookup.client(options.clientId);
  const accountId = accountIdOf({ enterpriseId: client?.enterpriseId ?? DEFAULT_ENTERPRISE_ID, userId: options.userId });
  const exp = now + (options.expiresInSeconds ?? 600);
  await service.services.repositories.oidcRecords.upsertOidcRecord({
    kind: 'AccessToken',
    key: token,
    grantId: randomUUID(),
    accountId,
    payload: {
      kind: 'AccessToken',
      jti: token,
      accountId,
      clientId: options.clientId,
      scope: options.scope ?? 'openid notifications',
      gty: 'authorization_code',
      iat: now,
      exp,
      ...(options.signedInAt === undefined ? {} : { extra: { auth_time: options.signedInAt } }),
    },
    // The store drops a record at its expiry; an already expired one is kept a while so the API sees it expired.
    expiresAt: new Date(Math.max(exp * 1000, Date.now() + 60_000)),
  });
  return token;
}

/** Blocks a user of the default enterprise through the admin API (as an operator would). */
export async function blockUser(service: Pick<TestService, 'url' | 'env'>, userId: string): Promise<void> {
  const res = await fetch(`${service.url}/admin/users/${userId}/blocked`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${service.env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ blocked: true }),
  });
  if (res.status !== 200) throw new Error(`block ${userId}: ${res.status} ${await res.text()}`);
}

export interface DeviceUser {
  userId: string;
  deviceId: string;
  privateKey: webcrypto.CryptoKey;
}

/**
 * Enrolls a user through POST /v1/users (with a predefined code) and activates it through
 * POST /v1/users/activate, registering a WebCrypto ECDSA P-256 device key.
 */
export async function enrollAndActivateWithDevice(
  service: Pick<TestService, 'url'>,
  usersToken: string,
  userId: string,
): Promise<DeviceUser> {
  const code = `CODE-${userId}`.slice(0, 60);
  const enrolled = await sendJson(`${service.url}/v1/users`, 'POST', usersToken, userBody(userId, { predefinedCode: code }));
  if (enrolled.status !== 201) throw new Error(`enroll ${userId}: ${enrolled.status} ${await enrolled.text()}`);
  const pair = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const jwk = await webcrypto.subtle.exportKey('jwk', pair.publicKey);
  const deviceId = `device-${userId}`;
  const activated = await sendJson(`${service.url}/v1/users/activate`, 'POST', undefined, {
    userId,
    activationCode: code,
    device: { deviceId, publicKeyJwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } },
  });
  if (activated.status !== 200) throw new Error(`activate ${userId}: ${activated.status} ${await activated.text()}`);
  return { userId, deviceId, privateKey: pair.privateKey };
}

/** What the client library sends: base64url of WebCrypto's P1363 signature over `uuid.response`. */
export async function signAnswer(privateKey: webcrypto.CryptoKey, notificationUuid: string, response: string): Promise<string> {
  const signature = await webcrypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    privateKey,
    new TextEncoder().encode(`${notificationUuid}.${response}`),
  );
  return Buffer.from(signature).toString('base64url');
}

export const ACTIONS = [
  { label: 'Approve', action: 'accept', authlevel: 1 },
  { label: 'Reject', action: 'reject', authlevel: 1 },
  { label: 'Report fraud', action: 'fraud', authlevel: 2 },
];

export function notificationBody(userId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    userId,
    body: [{ lng: 'English', subject: 'Login request', message: 'Approve the login from Chrome on Linux?' }],
    actions: ACTIONS,
    ...overrides,
  };
}

/**
 * Settings of a test file that asks one person many times (RATE_LIMIT_NOTIFICATIONS_PER_USER is 10
 * per 10 minutes by default): what it tests is not the limit, which notifications-limits tests.
 */
export const ASKS_ONE_PERSON_OFTEN = { RATE_LIMIT_NOTIFICATIONS_PER_USER: '1000' } as const;
