import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { acceptedKeys } from '../crypto/previous-keys.js';

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
 * Codes are compared without regard to letter case: generated codes use upper-case letters only,
 * and a person typing one on a phone keyboard often gets lower case. Predefined codes are treated
 * the same way, so one rule holds for every code. `toUpperCase` is locale-independent.
 */
export const normaliseActivationCode = (code: string) => code.toUpperCase();

/**
 * HMAC-SHA256 keyed with the server key, bound to the user so a digest copied to another user
 * does not verify there; the prefix keeps it apart from OTP digests made with the same key.
 * The code is normalised first, so the digest is the same for any letter case.
 */
export function digestActivationCode(userId: string, code: string, hmacKey: Buffer): string {
  return digestExactly(userId, normaliseActivationCode(code), hmacKey).toString('base64url');
}

function digestExactly(userId: string, code: string, hmacKey: Buffer): Buffer {
  return createHmac('sha256', hmacKey).update(`activation\u0000${userId}\u0000${code}`, 'utf8').digest();
}

/**
 * Constant-time: both sides are fixed-length digests, so neither content nor length leaks. Two
 * candidates are always computed and compared: the normalised code (every digest made since codes
 * ignore case) and the code exactly as typed (digests of mixed-case predefined codes stored before
 * that); both comparisons run whatever the first one found, so the time says nothing. So do they
 * for each key of OTP_HMAC_KEYS_PREVIOUS (codes digested before OTP_HMAC_KEY changed).
 */
export function verifyActivationCode(userId: string, code: string, digest: string, hmacKey: Buffer): boolean {
  const expected = Buffer.from(digest, 'base64url');
  let matches = false;
  for (const key of acceptedKeys(hmacKey)) {
    const normalised = digestExactly(userId, normaliseActivationCode(code), key);
    const exact = digestExactly(userId, code, key);
    if (expected.length !== normalised.length) return false;
    const matchesNormalised = timingSafeEqual(expected, normalised);
    const matchesExact = timingSafeEqual(expected, exact);
    matches = matchesNormalised || matchesExact || matches;
  }
  return matches;
}
