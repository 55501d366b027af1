import { createHmac, webcrypto } from 'node:crypto';
import { verifyDeviceSignature } from '../../../core/notifications/notification-signature.js';
import { callbackBackoffMs } from '../../../core/platform/queues/notification.queue.js';
import { signCallback } from '../../../core/notifications/notification-callback.js';

async function device() {
  const pair = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const jwk = await webcrypto.subtle.exportKey('jwk', pair.publicKey);
  return {
    privateKey: pair.privateKey,
    publicKeyJwk: { kty: 'EC' as const, crv: 'P-256' as const, x: jwk.x as string, y: jwk.y as string },
  };
}
const sign = async (key: webcrypto.CryptoKey, text: string) =>
  Buffer.from(await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, new TextEncoder().encode(text))).toString('base64url');

describe('device signatures and callback signing', () => {
  test('when WebCrypto signs uuid.response, then it verifies; another text, key or encoding does not', async () => {
    const a = await device();
    const b = await device();
    const uuid = '0b7c1d5e-4f3a-4b2c-9d8e-7f6a5b4c3d2e';
    const good = await sign(a.privateKey, `${uuid}.accept`);
    expect(verifyDeviceSignature(a, uuid, 'accept', good)).toBe(true);
    expect(verifyDeviceSignature(a, uuid, 'reject', good)).toBe(false);
    expect(verifyDeviceSignature(b, uuid, 'accept', good)).toBe(false);
    // Padded standard base64 is not the documented encoding.
    expect(verifyDeviceSignature(a, uuid, 'accept', `${Buffer.from(good, 'base64url').toString('base64')}=`)).toBe(false);
    expect(verifyDeviceSignature(a, uuid, 'accept', `${good}AA`)).toBe(false);
    expect(verifyDeviceSignature(a, uuid, 'accept', '')).toBe(false);
  });

  test('when a callback is signed, then the header carries t and the HMAC of "<t>.<body>"', () => {
    const header = signCallback('secret', '{"a":1}', 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${createHmac('sha256', 'secret').update('1700000000.{"a":1}').digest('hex')}`);
  });

  test('when callbacks fail, then retries double from the base up to an hour and span about a day', () => {
    expect([1, 2, 3].map((n) => callbackBackoffMs(n, 1000))).toEqual([1000, 2000, 4000]);
    expect(callbackBackoffMs(20, 1000)).toBe(3_600_000);
    const total = Array.from({ length: 35 }, (_, i) => callbackBackoffMs(i + 1, 1000)).reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(23);
    expect(total / 3_600_000).toBeLessThan(26);
  });
});
