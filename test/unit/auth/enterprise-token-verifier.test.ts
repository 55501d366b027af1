import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { createEnterpriseTokenVerifier } from '../../../core/auth/enterprise-token.verifier.js';
import type { SigningKey } from '../../../core/auth/signing-key-chains.js';
import { createSigningKeyRing, UNKNOWN_KID_RELOAD_INTERVAL_MS as KEY_SET_RELOAD_INTERVAL_MS } from '../../../core/auth/signing-key-ring.js';
import { createVerificationKeySet as createKeySetOfRing } from '../../../core/auth/verification-key-set.js';

const expected = { issuer: 'https://id.example/svc/authserver', audience: 'https://id.example/v1' };

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const sign = () =>
    new SignJWT({ client_id: 'app', scope: 'otp' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(expected.issuer)
      .setAudience(expected.audience)
      .setSubject('app')
      .setJti(`jti-${Math.random()}`)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
  return { publicJwk, sign };
}

/**
 * The process's key set over a signing key ring whose first read gives `ownJwks` and whose later
 * reads (counted by the tests) give `storedJwks`; no periodic reload within a test.
 */
function createVerificationKeySet(ownJwks: () => Promise<JWK[]>, storedJwks: () => Promise<JWK[]>, now: () => number = Date.now) {
  let first = true;
  const asKey = (jwk: JWK): SigningKey => ({ kid: jwk.kid as string, alg: 'ES256', privateJwk: jwk, publicJwk: jwk });
  const ring = createSigningKeyRing(
    async () => {
      const jwks = first ? await ownJwks() : await storedJwks();
      first = false;
      return [{ alg: 'ES256', configured: false, keys: jwks.map((jwk) => ({ key: asKey(jwk), activeFrom: Number.NEGATIVE_INFINITY })) }];
    },
    {
      reloadIntervalMs: 3_600_000,
      keysAt: (chains) => {
        const all = chains.flatMap((chain) => chain.keys.map((chained) => chained.key));
        const signer = all[0] as SigningKey;
        return {
          tokens: signer,
          idTokens: signer,
          all,
          version: all.map((key) => key.kid).join(' '),
          validUntil: Number.POSITIVE_INFINITY,
        };
      },
      now,
    },
  );
  return createKeySetOfRing(ring);
}

type TestKey = Awaited<ReturnType<typeof signingKey>>;

/**
 * The verifier of a process whose own key is `own` and whose later reads of the stored keys (counted by `reads`) give
 * `stored`, each read waiting for `whileReading` first when it is given.
 */
function verifierOf(own: TestKey, stored: TestKey[], options: { now?: () => number; whileReading?: Promise<void> } = {}) {
  let reads = 0;
  const verify = createEnterpriseTokenVerifier(
    createVerificationKeySet(
      async () => [own.publicJwk],
      async () => {
        reads += 1;
        if (options.whileReading) await options.whileReading;
        return stored.map((key) => key.publicJwk);
      },
      options.now,
    ),
    expected,
  );
  return { verify, reads: () => reads };
}

describe('enterprise token verifier: keys made by other processes', () => {
  test('when a token names a key made by another process since, then the stored keys are read once and the token verifies', async () => {
    const own = await signingKey('own');
    const other = await signingKey('other');
    const { verify, reads } = verifierOf(own, [own, other]);
    expect(await verify(await own.sign())).toMatchObject({ client_id: 'app' });
    expect(reads()).toBe(0);
    expect(await verify(await other.sign())).toMatchObject({ client_id: 'app' });
    expect(await verify(await other.sign())).toMatchObject({ client_id: 'app' });
    expect(reads()).toBe(1);
  });

  test('when tokens name made-up keys, then they are refused and the stored keys are read at most once per interval', async () => {
    const own = await signingKey('own');
    const forger = await signingKey('made-up');
    let clock = 1_000_000;
    const { verify, reads } = verifierOf(own, [own], { now: () => clock });
    for (let i = 0; i < 20; i += 1) expect(await verify(await forger.sign())).toBeUndefined();
    expect(reads()).toBe(1);
    clock += KEY_SET_RELOAD_INTERVAL_MS;
    expect(await verify(await forger.sign())).toBeUndefined();
    expect(reads()).toBe(2);
    // The process's own tokens never wait for a read.
    expect(await verify(await own.sign())).toMatchObject({ client_id: 'app' });
    expect(reads()).toBe(2);
  });

  test('when tokens of a key made by another process arrive while the stored keys are being read, then they all wait for that read and verify', async () => {
    const own = await signingKey('own');
    const other = await signingKey('other');
    let finishRead: () => void = () => undefined;
    const readFinished = new Promise<void>((resolve) => {
      finishRead = resolve;
    });
    const { verify, reads } = verifierOf(own, [own, other], { whileReading: readFinished });
    const answers = Promise.all([verify(await other.sign()), verify(await other.sign()), verify(await other.sign())]);
    finishRead();
    expect(await answers).toEqual([
      expect.objectContaining({ client_id: 'app' }),
      expect.objectContaining({ client_id: 'app' }),
      expect.objectContaining({ client_id: 'app' }),
    ]);
    expect(reads()).toBe(1);
  });
});
