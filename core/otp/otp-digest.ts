import { createHmac, timingSafeEqual } from 'node:crypto';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { HashSpec } from './otp.types.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import { secretKeyOf } from '../crypto/secret-key-cache.js';
import { acceptedKeys } from '../crypto/previous-keys.js';

const HMAC_ALGORITHMS: Record<Exclude<HashSpec, 'PLAIN'>, { algorithm: string; encoding: 'base64' | 'hex' }> = {
  SHA_256: { algorithm: 'sha256', encoding: 'base64' },
  SHA_384: { algorithm: 'sha384', encoding: 'base64' },
  SHA_512: { algorithm: 'sha512', encoding: 'base64' },
  SHA_HEX_256: { algorithm: 'sha256', encoding: 'hex' },
  SHA_HEX_384: { algorithm: 'sha384', encoding: 'hex' },
  SHA_HEX_512: { algorithm: 'sha512', encoding: 'hex' },
};

function hmac(code: string, algorithm: string, key: Buffer): Buffer {
  return createHmac(algorithm, secretKeyOf(key)).update(code, 'utf8').digest();
}

/**
 * What is stored for an OTP: an HMAC keyed with a server secret, never a bare hash (a
 * 6-digit space falls to offline brute force); PLAIN stores the code encrypted, never in clear.
 */
export function digestOtp(code: string, hashSpec: HashSpec, keys: OtpKeys): string {
  if (hashSpec === 'PLAIN') return encryptSecret(code, keys.encryptionKey);
  const { algorithm, encoding } = HMAC_ALGORITHMS[hashSpec];
  return hmac(code, algorithm, keys.hmacKey).toString(encoding);
}

/**
 * Constant-time check of a submitted code against the stored value from digestOtp. While
 * OTP_HMAC_KEYS_PREVIOUS lists keys, a code digested with one of them verifies too; every key is
 * tried whatever the first found, so the time does not tell which key made the digest.
 */
export function verifyOtp(code: string, stored: string, hashSpec: HashSpec, keys: OtpKeys): boolean {
  // A PLAIN code is compared in clear (the HMAC only makes the comparison constant-time): one key does.
  if (hashSpec === 'PLAIN') return verifyOtpWith(code, stored, hashSpec, keys.encryptionKey, keys.hmacKey);
  let matches = false;
  for (const hmacKey of acceptedKeys(keys.hmacKey)) matches = verifyOtpWith(code, stored, hashSpec, keys.encryptionKey, hmacKey) || matches;
  return matches;
}

function verifyOtpWith(code: string, stored: string, hashSpec: HashSpec, encryptionKey: Buffer, hmacKey: Buffer): boolean {
  if (hashSpec === 'PLAIN') {
    let expected: string;
    try {
      expected = decryptSecret(stored, encryptionKey);
    } catch {
      return false; // tampered, truncated or encrypted with another key
    }
    // Comparing fixed-length HMACs keeps the comparison constant-time whatever the code lengths.
    return timingSafeEqual(hmac(code, 'sha256', hmacKey), hmac(expected, 'sha256', hmacKey));
  }
  const { algorithm, encoding } = HMAC_ALGORITHMS[hashSpec];
  const candidate = hmac(code, algorithm, hmacKey);
  const storedBytes = Buffer.from(stored, encoding);
  // The digest length is public (fixed per algorithm), so an early length check leaks nothing.
  if (storedBytes.length !== candidate.length || storedBytes.toString(encoding) !== stored) return false;
  return timingSafeEqual(candidate, storedBytes);
}
