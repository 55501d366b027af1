import { createPublicKey, verify } from 'node:crypto';
import type { UserDevice } from '../users/user.types.js';

/** The exact bytes the device signs: `notification_uuid + "." + response`, UTF-8. */
export function signedText(notificationUuid: string, response: string): string {
  return `${notificationUuid}.${response}`;
}

const P1363_P256_BYTES = 64;

/**
 * Checks a base64url IEEE P1363 ECDSA P-256 / SHA-256 signature (what WebCrypto's `sign`
 * returns) against the device's registered public key. Anything malformed is simply false.
 */
export function verifyDeviceSignature(
  device: Pick<UserDevice, 'publicKeyJwk'>,
  notificationUuid: string,
  response: string,
  signature: string,
): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(signature)) return false;
  const raw = Buffer.from(signature, 'base64url');
  if (raw.length !== P1363_P256_BYTES) return false;
  try {
    const key = createPublicKey({ key: { ...device.publicKeyJwk }, format: 'jwk' });
    return verify('sha256', Buffer.from(signedText(notificationUuid, response), 'utf8'), { key, dsaEncoding: 'ieee-p1363' }, raw);
  } catch {
    return false;
  }
}
