import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../../../core/crypto/secret-box.js';

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
});
