import { createPublicKey, verify } from 'node:crypto';
import { createDeviceKey, deviceRegistration, ensureDeviceKey, MemoryDeviceKeyStore, signAnswer } from '../src/index.js';

describe('device key', () => {
  test('when an answer is signed, then the signature verifies as P1363 ECDSA P-256/SHA-256 over "uuid.response" with the registered public JWK', async () => {
    const keys = await createDeviceKey();
    const registration = await deviceRegistration(keys, 'phone-1');
    expect(registration).toEqual({
      deviceId: 'phone-1',
      publicKeyJwk: { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String) },
    });
    const uuid = '0b9d6a0e-1c2f-4c3a-8d2e-6f1f2b3c4d5e';
    const signature = await signAnswer(keys.privateKey, uuid, 'accept');
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    const publicKey = createPublicKey({ key: { ...registration.publicKeyJwk }, format: 'jwk' });
    const bytes = Buffer.from(signature, 'base64url');
    expect(verify('sha256', Buffer.from(`${uuid}.accept`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, bytes)).toBe(true);
    expect(verify('sha256', Buffer.from(`${uuid}.reject`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, bytes)).toBe(false);
  });

  test('when the private key is asked for, then WebCrypto refuses to export it', async () => {
    const keys = await createDeviceKey();
    await expect(crypto.subtle.exportKey('jwk', keys.privateKey)).rejects.toThrow();
  });

  test('when a key store is empty, then ensureDeviceKey creates and saves one, and returns the same key afterwards', async () => {
    const store = new MemoryDeviceKeyStore();
    const first = await ensureDeviceKey(store);
    expect(await ensureDeviceKey(store)).toBe(first);
    await store.clear();
    expect(await store.load()).toBeUndefined();
  });
});
