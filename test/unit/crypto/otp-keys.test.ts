import { randomBytes } from 'node:crypto';
import { otpKeysFromConfig } from '../../../core/crypto/otp-keys.js';

const hex = randomBytes(32).toString('hex');
const hmac = randomBytes(32);

describe('otpKeysFromConfig', () => {
  test('when the config holds a base64url HMAC key and 64 hex characters, then both decode to their bytes', () => {
    const keys = otpKeysFromConfig({ otpHmacKey: hmac.toString('base64url'), otpEncryptionKey: hex });
    expect(keys.hmacKey.equals(hmac)).toBe(true);
    expect(keys.encryptionKey.equals(Buffer.from(hex, 'hex'))).toBe(true);
    expect(Object.isFrozen(keys)).toBe(true);
  });

  test('when the HMAC key is written in standard base64 (allowed by the config schema), then it decodes the same', () => {
    expect(otpKeysFromConfig({ otpHmacKey: hmac.toString('base64'), otpEncryptionKey: hex }).hmacKey.equals(hmac)).toBe(true);
  });

  test.each([
    ['the HMAC key is missing', undefined, hex, 'OTP_HMAC_KEY must be set (base64url)'],
    ['the HMAC key has invalid characters', 'not a key!', hex, 'OTP_HMAC_KEY must be set (base64url)'],
    ['the HMAC key is 16 bytes', randomBytes(16).toString('base64url'), hex, 'OTP_HMAC_KEY must decode to at least 32 bytes'],
    ['the encryption key is missing', hmac.toString('base64url'), undefined, 'OTP_ENCRYPTION_KEY must be 64 hex characters'],
    ['the encryption key is 62 hex characters', hmac.toString('base64url'), hex.slice(2), 'OTP_ENCRYPTION_KEY must be 64 hex characters'],
    ['the encryption key is not hex', hmac.toString('base64url'), 'z'.repeat(64), 'OTP_ENCRYPTION_KEY must be 64 hex characters'],
  ])('when %s, then loading fails with a message naming the key', (_label, otpHmacKey, otpEncryptionKey, message) => {
    expect(() => otpKeysFromConfig({ otpHmacKey, otpEncryptionKey })).toThrow(message);
  });
});
