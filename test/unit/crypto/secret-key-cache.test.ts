import { randomBytes } from 'node:crypto';
import { pooledRandomBytes, secretKeyOf } from '../../../core/crypto/secret-key-cache.js';

describe('secretKeyOf', () => {
  test('when the same key is asked for twice, then one key object holding its bytes serves both', () => {
    const key = randomBytes(32);
    const keyObject = secretKeyOf(key);
    expect(secretKeyOf(key)).toBe(keyObject);
    expect(keyObject.export().equals(key)).toBe(true);
  });

  test('when two keys have different bytes, then each gets its own key object', () => {
    expect(secretKeyOf(randomBytes(32)).equals(secretKeyOf(randomBytes(32)))).toBe(false);
  });
});

describe('pooledRandomBytes', () => {
  test('when many nonces are taken, across several pools, then no two are the same and none is all zero', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i += 1) {
      const nonce = pooledRandomBytes(12);
      expect(nonce).toHaveLength(12);
      expect(nonce.equals(Buffer.alloc(12))).toBe(false);
      seen.add(nonce.toString('hex'));
    }
    expect(seen.size).toBe(2000);
  });

  test('when a nonce was handed out, then later takes never change its bytes', () => {
    const nonce = pooledRandomBytes(12);
    const copy = Buffer.from(nonce);
    for (let i = 0; i < 1000; i += 1) pooledRandomBytes(12);
    expect(nonce.equals(copy)).toBe(true);
  });
});
