import { createCipheriv, createDecipheriv } from 'node:crypto';
import { acceptedKeys } from './previous-keys.js';
import { pooledRandomBytes, secretKeyOf } from './secret-key-cache.js';

const VERSION = 'v1';
const IV_BYTES = 12; // the GCM nonce size NIST recommends
const TAG_BYTES = 16;

function assertKey(key: Buffer): void {
  if (key.length !== 32) throw new Error('AES-256-GCM needs a 32-byte key');
}

/**
 * AES-256-GCM with a random IV, as `v1.<iv>.<tag>.<ciphertext>` (base64url): the version prefix
 * lets the format or key change later without guessing. `context` is bound as associated data,
 * so a blob copied to another record (for example another otpUuid) does not decrypt there.
 */
export function encryptSecret(plain: string, key: Buffer, context = ''): string {
  assertKey(key);
  const iv = pooledRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secretKeyOf(key), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/**
 * Reverses encryptSecret; throws on a malformed, tampered or wrongly keyed blob. Tries the current
 * key first (what it sealed opens at the cost of one decryption), then each previous key that came
 * with it (core/crypto/previous-keys.ts), so data sealed before a rotation still opens.
 */
export function decryptSecret(blob: string, key: Buffer, context = ''): string {
  const keys = acceptedKeys(key);
  let firstFailure: unknown;
  for (const candidate of keys) {
    try {
      return decryptSecretWithKey(blob, candidate, context);
    } catch (err) {
      firstFailure ??= err;
    }
  }
  throw firstFailure;
}

/** Opens `blob` with `key` alone, never a previous key: tells whether the current key sealed it. */
export function decryptSecretWithKey(blob: string, key: Buffer, context = ''): string {
  assertKey(key);
  const parts = blob.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('Not an encrypted secret');
  const [iv, tag, ciphertext] = parts.slice(1).map((part) => Buffer.from(part, 'base64url'));
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('Not an encrypted secret');
  const decipher = createDecipheriv('aes-256-gcm', secretKeyOf(key), iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
}
