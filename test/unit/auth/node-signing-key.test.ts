import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { derToP1363 } from '../../../api/auth-server/node-signing-key.js';

describe('ECDSA signature from DER to the JWS form (r || s)', () => {
  test('when 2000 P-256 signatures are converted, then each matches what JWS verifiers check (ieee-p1363), short r and s included', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let short = 0;
    for (let i = 0; i < 2000; i++) {
      const data = randomBytes(64);
      const der = sign('sha256', data, privateKey);
      // r or s below 2^248 takes fewer than 32 bytes in DER (1 in 128 signatures, per half).
      if (der[3] < 32 || der[5 + der[3]] < 32) short++;
      const jws = derToP1363(der, 32);
      expect(jws).toHaveLength(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jws)).toBe(true);
    }
    expect(short).toBeGreaterThan(0);
  });
});
