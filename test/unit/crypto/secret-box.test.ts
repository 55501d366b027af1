import { randomBytes } from 'node:crypto';
import { decryptSecret, decryptSecretWithKey, encryptSecret } from '../../../core/crypto/secret-box.js';
import { withPreviousKeys } from '../../../core/crypto/previous-keys.js';

const key = randomBytes(32);

describe('encryptSecret / decryptSecret', () => {
  test.each(['483920', 'Xk7#p9Q2', '', 'é ✓ unicode'])(
    'when %j is encrypted, then it decrypts back and is not visible in the blob',
    (plain) => {
      const blob = encryptSecret(plain, key);
      expect(decryptSecret(blob, key)).toBe(plain);
      if (plain !== '') expect(blob).not.toContain(plain);
    },
  );

  test('when the context differs from the one used to encrypt, then decryption fails', () => {
    const blob = encryptSecret('483920', key, 'otp-1');
    expect(decryptSecret(blob, key, 'otp-1')).toBe('483920');
    expect(() => decryptSecret(blob, key, 'otp-2')).toThrow();
    expect(() => decryptSecret(blob, key)).toThrow();
  });

  test('when another key is used, then decryption fails', () => {
    expect(() => decryptSecret(encryptSecret('483920', key), randomBytes(32))).toThrow();
  });

  test('when the blob is malformed, then decryption fails with a clear message', () => {
    expect(() => decryptSecret('483920', key)).toThrow('Not an encrypted secret');
    expect(() => decryptSecret('v1.AAAA.BBBB.CCCC', key)).toThrow('Not an encrypted secret');
  });

  test('when the key is not 32 bytes, then both directions refuse it', () => {
    expect(() => encryptSecret('x', randomBytes(16))).toThrow('AES-256-GCM needs a 32-byte key');
    expect(() => decryptSecret('v1.a.b.c', randomBytes(31))).toThrow('AES-256-GCM needs a 32-byte key');
  });

  test('when the current key came with previous keys, then what a previous key sealed opens, what it seals opens with the current key alone, and a key of neither does not open', () => {
    const previous = randomBytes(32);
    const current = withPreviousKeys(randomBytes(32), [previous]);
    const old = encryptSecret('483920', previous, 'otp-1');
    expect(decryptSecret(old, current, 'otp-1')).toBe('483920');
    expect(() => decryptSecretWithKey(old, current, 'otp-1')).toThrow();
    expect(() => decryptSecret(old, current, 'otp-2')).toThrow();
    const fresh = encryptSecret('483920', current, 'otp-1');
    expect(decryptSecretWithKey(fresh, current, 'otp-1')).toBe('483920');
    expect(() => decryptSecret(fresh, previous, 'otp-1')).toThrow();
    expect(() => decryptSecret(old, randomBytes(32), 'otp-1')).toThrow();
  });
});
