import { createHmac, createSecretKey, hash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

// Client secrets are 256 random bits, so a keyed fast hash is enough: nobody can brute-force the
// preimage, and scrypt's deliberate cost would only make every token request slower. The salt
// keys the HMAC so equal secrets never share a stored value.
const SCHEME = 'hmac-sha256';

export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(key: KeyObject, secret: string): Buffer {
  return createHmac('sha256', key).update(secret, 'utf8').digest();
}

// A KeyObject, not the salt Buffer itself: on Node 24 createHmac with a Buffer key costs about
// 13 µs, with a KeyObject about 2 µs. Parsing the stored form and building its key is done once per
// stored form, not on every token request that authenticates the client. Stored forms are HMACs,
// not secrets; the map is bounded (it starts over past its size, as a client count never reaches).
const MAX_PARSED = 10_000;
interface StoredForm {
  key: KeyObject;
  expected: Buffer;
  /** SHA-256 of the last secret that matched this stored form (see verifyClientSecret). */
  matched?: Buffer;
}
const parsed = new Map<string, StoredForm | null>();

function parseStored(stored: string): StoredForm | null {
  let hit = parsed.get(stored);
  if (hit !== undefined) return hit;
  const [scheme, salt, expected] = stored.split('$');
  hit =
    scheme !== SCHEME || !salt || !expected
      ? null
      : { key: createSecretKey(Buffer.from(salt, 'base64url')), expected: Buffer.from(expected, 'base64url') };
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(stored, hit);
  return hit;
}

/** The stored form `hmac-sha256$<salt>$<digest>` (base64url). */
export function hashClientSecret(secret: string): string {
  const salt = randomBytes(16);
  return `${SCHEME}$${salt.toString('base64url')}$${digest(createSecretKey(salt), secret).toString('base64url')}`;
}

/**
 * Constant-time check of a presented secret against the stored form. A secret that matched is
 * remembered by its SHA-256, so a client that authenticates again is checked by one one-shot hash
 * instead of an HMAC (the HMAC object cost about 6 % of a token request's CPU under load): equal
 * SHA-256 digests mean the same secret, which matched this stored form. No secret is kept, and a
 * secret that does not match always goes through the HMAC.
 */
export function verifyClientSecret(stored: string, presented: string): boolean {
  const form = parseStored(stored);
  if (!form) return false;
  const fingerprint = hash('sha256', presented, 'buffer');
  if (form.matched && timingSafeEqual(form.matched, fingerprint)) return true;
  const got = digest(form.key, presented);
  const matches = form.expected.length === got.length && timingSafeEqual(form.expected, got);
  if (matches) form.matched = fingerprint;
  return matches;
}
