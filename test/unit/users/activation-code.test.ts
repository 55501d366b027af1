import { createHmac, randomBytes } from 'node:crypto';
import {
  ACTIVATION_ALPHABET,
  digestActivationCode,
  generateActivationCode,
  generateVerificationKey,
  verifyActivationCode,
} from '../../../core/users/activation-code.js';
import { withPreviousKeys } from '../../../core/crypto/previous-keys.js';

describe('activation codes', () => {
  const key = randomBytes(32);

  test('when codes are generated, then they are 8 characters of the unambiguous upper-case alphabet', () => {
    expect(ACTIVATION_ALPHABET).not.toMatch(/[01ILO]/);
    for (let i = 0; i < 200; i += 1) expect(generateActivationCode()).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/);
    expect(generateVerificationKey()).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/);
  });

  test('when many codes are generated, then every alphabet character appears and none repeats as a whole code', () => {
    const codes = Array.from({ length: 2000 }, generateActivationCode);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(codes.join('')).size).toBe(ACTIVATION_ALPHABET.length);
  });

  test('when a code is digested, then only the same code, user and key verify', () => {
    const digest = digestActivationCode('alice', 'ABCD2345', key);
    expect(digest).not.toContain('ABCD2345');
    expect(verifyActivationCode('alice', 'ABCD2345', digest, key)).toBe(true);
    expect(verifyActivationCode('alice', 'ABCD2346', digest, key)).toBe(false);
    expect(verifyActivationCode('bob', 'ABCD2345', digest, key)).toBe(false);
    expect(verifyActivationCode('alice', 'ABCD2345', digest, randomBytes(32))).toBe(false);
    expect(verifyActivationCode('alice', 'ABCD2345', 'short', key)).toBe(false);
  });

  test('when a code is typed in another letter case, then it verifies as the code itself, for generated and predefined codes alike', () => {
    const digest = digestActivationCode('alice', 'K7PQ2XMA', key);
    for (const typed of ['k7pq2xma', 'K7pq2XmA']) expect(verifyActivationCode('alice', typed, digest, key)).toBe(true);
    expect(digestActivationCode('alice', 'k7pq2xma', key)).toBe(digest);
    const predefined = digestActivationCode('bob', 'Secret-Code-42', key);
    expect(verifyActivationCode('bob', 'SECRET-CODE-42', predefined, key)).toBe(true);
    expect(verifyActivationCode('bob', 'secret-code-43', predefined, key)).toBe(false);
  });

  test('when a digest was stored from a mixed-case predefined code before codes ignored case, then that exact code still verifies', () => {
    const legacy = createHmac('sha256', key).update('activation\u0000bob\u0000Secret-Code-42', 'utf8').digest('base64url');
    expect(verifyActivationCode('bob', 'Secret-Code-42', legacy, key)).toBe(true);
    expect(verifyActivationCode('bob', 'Secret-Code-43', legacy, key)).toBe(false);
  });

  test('when the HMAC key changed and the old one is a previous key, then a code digested with the old key verifies, one digested with another key does not', () => {
    const old = randomBytes(32);
    const current = withPreviousKeys(randomBytes(32), [old]);
    const stored = digestActivationCode('alice', 'ABCD-EFGH', old);
    expect(verifyActivationCode('alice', 'abcd-efgh', stored, current)).toBe(true);
    expect(verifyActivationCode('alice', 'ABCD-EFGX', stored, current)).toBe(false);
    expect(verifyActivationCode('bob', 'ABCD-EFGH', stored, current)).toBe(false);
    expect(verifyActivationCode('alice', 'ABCD-EFGH', digestActivationCode('alice', 'ABCD-EFGH', randomBytes(32)), current)).toBe(false);
    expect(verifyActivationCode('alice', 'ABCD-EFGH', digestActivationCode('alice', 'ABCD-EFGH', current), old)).toBe(false);
  });
});
