import { createHmac, randomBytes } from 'node:crypto';
import { digestOtp, verifyOtp } from '../../../core/otp/otp-digest.js';
import { otpKeysFromConfig, type OtpKeys } from '../../../core/crypto/otp-keys.js';
import { HASH_SPECS, type HashSpec } from '../../../core/otp/otp.types.js';

function freshKeys(): OtpKeys {
  return otpKeysFromConfig({ otpHmacKey: randomBytes(32).toString('base64url'), otpEncryptionKey: randomBytes(32).toString('hex') });
}

const keys = freshKeys();
const otherKeys = freshKeys();
const CODE = 'Xk7#p9Q2';

describe('digestOtp / verifyOtp', () => {
  test.each(HASH_SPECS)('when %s stores a code, then the same code verifies and the stored value never contains it', (hashSpec) => {
    const stored = digestOtp(CODE, hashSpec, keys);
    expect(stored).not.toContain(CODE);
    expect(verifyOtp(CODE, stored, hashSpec, keys)).toBe(true);
  });

  test.each(HASH_SPECS)('when %s is given a wrong code, then verification fails', (hashSpec) => {
    const stored = digestOtp('123456', hashSpec, keys);
    for (const wrong of ['123457', '12345', '1234567', '', '123456 ']) expect(verifyOtp(wrong, stored, hashSpec, keys)).toBe(false);
  });

  test.each(HASH_SPECS)('when %s is checked with other server keys, then verification fails', (hashSpec) => {
    expect(verifyOtp(CODE, digestOtp(CODE, hashSpec, keys), hashSpec, otherKeys)).toBe(false);
  });

  test.each([
    ['SHA_256', 'sha256', 'base64'],
    ['SHA_384', 'sha384', 'base64'],
    ['SHA_512', 'sha512', 'base64'],
    ['SHA_HEX_256', 'sha256', 'hex'],
    ['SHA_HEX_384', 'sha384', 'hex'],
    ['SHA_HEX_512', 'sha512', 'hex'],
  ] as const)('when %s digests a code, then it stores HMAC-%s keyed with the server key, in %s', (hashSpec, algorithm, encoding) => {
    const expected = createHmac(algorithm, keys.hmacKey).update(CODE, 'utf8').digest(encoding);
    expect(digestOtp(CODE, hashSpec, keys)).toBe(expected);
    expect(digestOtp(CODE, hashSpec, keys)).not.toBe(createHmac(algorithm, Buffer.alloc(0)).update(CODE).digest(encoding));
  });

  test.each(['SHA_256', 'SHA_HEX_512'] as HashSpec[])(
    'when a %s stored value is truncated or altered, then verification fails',
    (hashSpec) => {
      const stored = digestOtp(CODE, hashSpec, keys);
      expect(verifyOtp(CODE, stored.slice(0, -2), hashSpec, keys)).toBe(false);
      expect(verifyOtp(CODE, `${stored}00`, hashSpec, keys)).toBe(false);
      expect(
        verifyOtp(
          CODE,
          stored.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
          hashSpec,
          keys,
        ),
      ).toBe(false);
      expect(verifyOtp(CODE, '', hashSpec, keys)).toBe(false);
    },
  );

  test('when a code is checked against a digest of another hashSpec, then verification fails', () => {
    expect(verifyOtp(CODE, digestOtp(CODE, 'SHA_256', keys), 'SHA_HEX_256', keys)).toBe(false);
    expect(verifyOtp(CODE, digestOtp(CODE, 'SHA_256', keys), 'PLAIN', keys)).toBe(false);
  });

  test('when PLAIN stores the same code twice, then the blobs differ (random IV) and both verify', () => {
    const first = digestOtp(CODE, 'PLAIN', keys);
    const second = digestOtp(CODE, 'PLAIN', keys);
    expect(first).not.toBe(second);
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(verifyOtp(CODE, second, 'PLAIN', keys)).toBe(true);
  });

  test('when any part of a PLAIN blob is tampered with, then verification fails', () => {
    const stored = digestOtp(CODE, 'PLAIN', keys);
    const parts = stored.split('.');
    for (let index = 1; index < 4; index += 1) {
      const bytes = Buffer.from(parts[index], 'base64url');
      bytes[0] ^= 0x01;
      const tampered = parts.map((part, i) => (i === index ? bytes.toString('base64url') : part)).join('.');
      expect(verifyOtp(CODE, tampered, 'PLAIN', keys)).toBe(false);
    }
    for (const garbage of ['', 'v1', 'v1...', 'v2.' + parts.slice(1).join('.'), stored + '.x', CODE]) {
      expect(verifyOtp(CODE, garbage, 'PLAIN', keys)).toBe(false);
    }
  });

  test.each(HASH_SPECS.filter((spec) => spec !== 'PLAIN'))(
    'when OTP_HMAC_KEY changed and the old key is listed in OTP_HMAC_KEYS_PREVIOUS, then a %s code digested with it verifies, a new digest uses the new key, and a wrong code fails',
    (spec) => {
      const old = randomBytes(32).toString('base64url');
      const before = otpKeysFromConfig({ otpHmacKey: old, otpEncryptionKey: randomBytes(32).toString('hex') });
      const rotated = otpKeysFromConfig({
        otpHmacKey: randomBytes(32).toString('base64url'),
        otpHmacKeysPrevious: old,
        otpEncryptionKey: randomBytes(32).toString('hex'),
      });
      const stored = digestOtp(CODE, spec, before);
      expect(verifyOtp(CODE, stored, spec, rotated)).toBe(true);
      expect(verifyOtp('wrong', stored, spec, rotated)).toBe(false);
      const fresh = digestOtp(CODE, spec, rotated);
      expect(fresh).not.toBe(stored);
      expect(verifyOtp(CODE, fresh, spec, before)).toBe(false);
      expect(
        verifyOtp(
          CODE,
          stored,
          spec,
          otpKeysFromConfig({ otpHmacKey: randomBytes(32).toString('base64url'), otpEncryptionKey: randomBytes(32).toString('hex') }),
        ),
      ).toBe(false);
    },
  );
});
