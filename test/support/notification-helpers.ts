import { randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, importJWK } from 'jose';
import { tokenIdentity } from '../../api/auth-server/auth-server.js';
import { getSigningKey } from '../../core/auth/signing-key.service.js';
import { registerClient } from '../../core/clients/clients.service.js';
import type { TestService } from './test-service.js';
import { sendJson, userBody } from './users-helpers.js';

/** A public client standing for the approver app users sign in through. */
export async function registerAppClient(service: Pick<TestService, 'ctx'>): Promise<string> {
  const { client } = await registerClient(service.ctx.mongo, { name: 'approver app', scopes: ['notifications'], public: true, redirectUris: ['http://127.0.0.1/cb'] });
  return client.clientId;
}

/**
 * A user access token shaped like the one the authorization server issues for the authorization
 * code flow (RFC 9068 `at+jwt`, sub = userId, client_id = the app), signed with the service key.
 * Stands in for sign-in until the login interaction exists.
 */
export async function mintUserToken(
  service: Pick<TestService, 'ctx' | 'config'>,
  options: { userId: string; clientId: string; scope?: string; expiresInSeconds?: number; sub?: string },
): Promise<string> {
  const key = await getSigningKey(service.ctx.mongo, service.config);
  const { issuer, audience } = tokenIdentity(service.config.publicUrl);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: options.clientId, scope: options.scope ?? 'openid notifications' })
    .setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject(options.sub ?? options.userId)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresInSeconds ?? 600))
    .sign(await importJWK(key.privateJwk, key.alg));
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
export async function enrollAndActivateWithDevice(service: Pick<TestService, 'url'>, usersToken: string, userId: string): Promise<DeviceUser> {
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
  const signature = await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, new TextEncoder().encode(`${notificationUuid}.${response}`));
  return Buffer.from(signature).toString('base64url');
}

export const ACTIONS = [
  { label: 'Approve', action: 'accept', authlevel: 1 },
  { label: 'Reject', action: 'reject', authlevel: 1 },
  { label: 'Report fraud', action: 'fraud', authlevel: 2 },
];

export function notificationBody(userId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { userId, body: [{ lng: 'English', subject: 'Login request', message: 'Approve the login from Chrome on Linux?' }], actions: ACTIONS, ...overrides };
}
