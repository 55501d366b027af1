import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const keyObjects = new WeakMap<Buffer, KeyObject>();

/**
 * The server key as a KeyObject, made once per key Buffer: handing Node's ciphers and HMACs a raw
 * Buffer makes them build a key object on every call, which cost about 10 µs each (more than the
 * cipher itself), several times per OTP. The keys are never modified after start.
 */
export function secretKeyOf(key: Buffer): KeyObject {
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * `size` fresh random bytes (size ≤ 4096), cut from a pool filled by the CSPRNG: one
 * `randomBytes` call per 4 KiB instead of one per nonce. A pool is never refilled in place (a
 * new one replaces it), so no two callers ever get the same bytes.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, size));
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}
