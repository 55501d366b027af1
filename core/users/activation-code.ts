import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/** Upper-case letters and digits without look-alikes (0/O, 1/I/L): easy to read and type. */
export const ACTIVATION_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const ACTIVATION_CODE_LENGTH = 8;
export const VERIFICATION_KEY_LENGTH = 6;

/** Uniform draw with crypto.randomInt (no modulo bias). */
export function generateFromAlphabet(length: number, alphabet = ACTIVATION_ALPHABET): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export const generateActivationCode = () => generateFromAlphabet(ACTIVATION_CODE_LENGTH);
export const generateVerificationKey = () => generateFromAlphabet(VERIFICATION_KEY_LENGTH);

/**
 * HMAC-SHA256 keyed with the server key, bound to the user so a digest copied to another user
 * does not verify there; the prefix keeps it apart from OTP digests made with the same key.
 */
export function digestActivationCode(userId: string, code: string, hmacKey: Buffer): string {
  return createHmac('sha256', hmacKey).update(`activation\u0000${userId}\u0000${code}`, 'utf8').digest('base64url');
}

/** Constant-time: both sides are fixed-length digests, so neither content nor length leaks. */
export function verifyActivationCode(userId: string, code: string, digest: string, hmacKey: Buffer): boolean {
  const expected = Buffer.from(digest, 'base64url');
  const actual = Buffer.from(digestActivationCode(userId, code, hmacKey), 'base64url');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
