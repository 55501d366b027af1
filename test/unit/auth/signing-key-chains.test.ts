import { signingKeysAt, type KeyChain, type SigningKey } from '../../../core/auth/signing-key-chains.js';
import { createSigningKeyRing } from '../../../core/auth/signing-key-ring.js';

const key = (kid: string, alg: 'ES256' | 'RS256' = 'ES256'): SigningKey => ({ kid, alg, privateJwk: { kid }, publicJwk: { kid } });
const rsa = { alg: 'RS256' as const, configured: false, keys: [{ key: key('rsa', 'RS256'), activeFrom: Number.NEGATIVE_INFINITY }] };

/** The P-256 chain: the first key, and a successor that signs from 100 and retires the first at `retiresAt`. */
function rotatedChain(retiresAt: number, activeFrom = 100): KeyChain[] {
  return [
    rsa,
    {
      alg: 'ES256',
      configured: false,
      keys: [
        { key: key('first'), activeFrom: Number.NEGATIVE_INFINITY },
        { key: key('second'), activeFrom, retiresEarlierAt: retiresAt },
      ],
    },
  ];
}

const kids = (keys: SigningKey[]) => keys.map((k) => k.kid);

describe('signing keys of a rotation, by time', () => {
  test('when a rotated key has not started yet, then it is published and the key it replaces signs', () => {
    const at = signingKeysAt(rotatedChain(200), 'ES256', 50);
    expect([at.tokens.kid, at.idTokens.kid]).toEqual(['first', 'rsa']);
    expect(kids(at.all)).toEqual(['first', 'rsa', 'second']);
    expect(at.validUntil).toBe(100);
  });

  test('when it has started, then it signs and the replaced key stays published until its removal', () => {
    const at = signingKeysAt(rotatedChain(200), 'ES256', 150);
    expect(at.tokens.kid).toBe('second');
    expect(kids(at.all)).toEqual(['second', 'rsa', 'first']);
    expect(at.validUntil).toBe(200);
  });

  test('when the removal has come, then the replaced key is neither published nor accepted', () => {
    const at = signingKeysAt(rotatedChain(200), 'ES256', 200);
    expect(kids(at.all)).toEqual(['second', 'rsa']);
    expect(at.validUntil).toBe(Number.POSITIVE_INFINITY);
  });

  test('when the rotation retired at once, then the new key signs and the old one is gone at that moment', () => {
    const at = signingKeysAt(rotatedChain(100, 100), 'ES256', 100);
    expect(kids(at.all)).toEqual(['second', 'rsa']);
    expect(signingKeysAt(rotatedChain(100, 100), 'ES256', 99).tokens.kid).toBe('first');
  });

  test('when the keys change, then their version changes, and only then', () => {
    const before = signingKeysAt(rotatedChain(200), 'ES256', 50);
    expect(signingKeysAt(rotatedChain(200), 'ES256', 60).version).toBe(before.version);
    expect(signingKeysAt(rotatedChain(200), 'ES256', 150).version).not.toBe(before.version);
  });
});

describe('signing key ring: reading the keys again', () => {
  test('when the reload interval has passed, then the next caller triggers one read in the background and is answered at once', async () => {
    let clock = 0;
    let reads = 0;
    let finish: () => void = () => undefined;
    const ring = createSigningKeyRing(
      async () => {
        reads += 1;
        if (reads > 1) await new Promise<void>((resolve) => (finish = resolve));
        return rotatedChain(200);
      },
      { reloadIntervalMs: 60_000, keysAt: (chains, t) => signingKeysAt(chains, 'ES256', t), now: () => clock },
    );
    expect((await ring.current()).tokens.kid).toBe('first');
    clock = 60_000;
    // Answered from the keys held while the read is under way; one read for all callers.
    expect(kids((await Promise.all([ring.current(), ring.current()])).map((keys) => keys.tokens))).toEqual(['second', 'second']);
    expect(reads).toBe(2);
    finish();
  });

  test('when the process was idle for two intervals, then the next caller waits for the read', async () => {
    let clock = 0;
    let chains = rotatedChain(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    const ring = createSigningKeyRing(async () => chains, {
      reloadIntervalMs: 60_000,
      keysAt: (loaded, t) => signingKeysAt(loaded, 'ES256', t),
      now: () => clock,
    });
    expect((await ring.current()).tokens.kid).toBe('first');
    chains = rotatedChain(0, 0);
    clock = 120_000;
    expect((await ring.current()).tokens.kid).toBe('second');
  });
});

describe('signing key ring: keys that cannot be read', () => {
  test('when the read for an unknown kid fails, then its error is thrown, and again within the budget, until a read succeeds', async () => {
    let clock = 0;
    let down = false;
    const outage = new Error('MongoDB is down');
    const ring = createSigningKeyRing(
      async () => {
        if (down) throw outage;
        return rotatedChain(200_000, 100_000);
      },
      { reloadIntervalMs: 60_000, keysAt: (chains, t) => signingKeysAt(chains, 'ES256', t), now: () => clock },
    );
    expect((await ring.current()).tokens.kid).toBe('first');
    down = true;
    await expect(ring.forUnknownKid('made-since')).rejects.toBe(outage);
    clock = 1000;
    await expect(ring.forUnknownKid('made-since')).rejects.toBe(outage);
    // Known keys are still served from what was read.
    expect((await ring.forUnknownKid('second')).tokens.kid).toBe('first');
    down = false;
    clock = 6000;
    expect(kids((await ring.forUnknownKid('made-since')).all)).toEqual(['first', 'rsa', 'second']);
  });
});

describe('signing key ring: reading again after a rotation', () => {
  test('when reload is asked while a read begun before the rotation is under way, then the keys after the rotation are read', async () => {
    let clock = 0;
    let stored = rotatedChain(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    let release: () => void = () => undefined;
    let slow = false;
    const ring = createSigningKeyRing(
      async () => {
        const snapshot = stored;
        if (slow) await new Promise<void>((resolve) => (release = resolve));
        return snapshot;
      },
      { reloadIntervalMs: 60_000, keysAt: (chains, t) => signingKeysAt(chains, 'ES256', t), now: () => clock },
    );
    expect((await ring.current()).tokens.kid).toBe('first');
    // A periodic read starts, then the rotation (retire at once) is stored, and its process reloads.
    slow = true;
    clock = 60_000;
    await ring.current();
    slow = false;
    stored = rotatedChain(0, 0);
    const reloaded = ring.reload();
    release();
    await reloaded;
    expect((await ring.current()).tokens.kid).toBe('second');
  });
});
