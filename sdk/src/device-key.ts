// The device key signs the user's answers to notifications that require a digital signature.
// ECDSA P-256 with SHA-256 through WebCrypto, present in browsers, Node 22+ and React Native
// (with a WebCrypto polyfill, see the README).
import type { DeviceKeyStore } from './device-key-store.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** The public half of the device key, as the activation request carries it. */
export interface PublicDeviceJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

export interface DeviceRegistration {
  deviceId: string;
  publicKeyJwk: PublicDeviceJwk;
}

/** A new key pair whose private key can never be exported (WebCrypto keeps it opaque). */
export async function createDeviceKey(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ALGORITHM, false, ['sign', 'verify']);
}

/** The stored key pair, created and saved on first use. */
export async function ensureDeviceKey(store: DeviceKeyStore): Promise<CryptoKeyPair> {
  const existing = await store.load();
  if (existing) return existing;
  const created = await createDeviceKey();
  await store.save(created);
  return created;
}

export async function exportPublicJwk(keys: CryptoKeyPair): Promise<PublicDeviceJwk> {
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) throw new TypeError('the device key is not an ECDSA P-256 key');
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

/** What `POST /v1/users/activate` takes as `device`, so the server can verify signed answers. */
export async function deviceRegistration(keys: CryptoKeyPair, deviceId: string): Promise<DeviceRegistration> {
  return { deviceId, publicKeyJwk: await exportPublicJwk(keys) };
}

function base64url(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The signature the server checks: base64url of the 64-byte P1363 signature (what WebCrypto's
 * `sign` returns) over the UTF-8 text `notification_uuid + "." + response`.
 */
export async function signAnswer(privateKey: CryptoKey, notificationUuid: string, response: string): Promise<string> {
  const data = new TextEncoder().encode(`${notificationUuid}.${response}`);
  return base64url(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, data));
}
