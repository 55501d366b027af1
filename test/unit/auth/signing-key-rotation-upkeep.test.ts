import type { ChainedKey, KeyChain, SigningAlg } from '../../../core/auth/signing-key-chains.js';
import { removedRotations, REMOVED_ROTATION_KEPT_MS } from '../../../core/auth/signing-key-rotation-upkeep.js';
import type { StoredKeys, StoredRotation } from '../../../core/auth/signing-key.service.js';

const HOUR = REMOVED_ROTATION_KEPT_MS;

/** A key of `alg` made by rotation `sequence` (0: the first key), retiring its predecessors at `retires`. */
const chained = (alg: SigningAlg, sequence: number, retires?: number): ChainedKey => {
  const kid = `${alg}-${sequence}`;
  return {
    key: { kid, alg, privateJwk: { kid }, publicJwk: { kid } },
    activeFrom: sequence === 0 ? Number.NEGATIVE_INFINITY : sequence * 10,
    retiresEarlierAt: retires,
  };
};

/**
 * Three rotations of both keys. `retires[alg][n]` is when rotation n+1 retires the keys before it:
 * the RSA key is kept longer (sign-in sessions) than the P-256 key.
 */
function stored(retires: Record<SigningAlg, [number, number, number]>, recorded: [boolean?, boolean?, boolean?] = []): StoredKeys {
  const chains: KeyChain[] = (['RS256', 'ES256'] as const).map((alg) => ({
    alg,
    configured: false,
    keys: [chained(alg, 0), ...retires[alg].map((at, index) => chained(alg, index + 1, at))],
  }));
  const rotations = [1, 2, 3].map((sequence) => {
    const rotation: StoredRotation = {
      activeFrom: new Date(sequence * 10),
      rotatedAt: new Date(sequence * 10),
      keys: (['RS256', 'ES256'] as const).map((alg) => ({
        alg,
        sealed: { publicJwk: { kid: `${alg}-${sequence}` }, privateJwkBox: 'sealed' },
        retiresEarlierAt: new Date(retires[alg][sequence - 1] as number),
      })),
    };
    const entry = recorded[sequence - 1];
    if (entry !== undefined) rotation.entry = { recorded: entry, actor: { type: 'admin' }, signingKeys: [] };
    return { name: `signing-key-rotation:${sequence}`, sequence, rotation };
  });
  return { chains, lastRotation: 3, rotations };
}

describe('rotation documents no process needs any more', () => {
  const routine = stored({ RS256: [1000, 2000, 3000], ES256: [100, 200, 300] });

  test('when every key of a rotation was removed an hour ago, then its document is listed, and the newest never is', () => {
    // Rotation 1's keys are removed when rotation 2 retires them (RSA at 2000), rotation 2's at 3000.
    expect(removedRotations(routine, 3000 + HOUR)).toEqual(['signing-key-rotation:1', 'signing-key-rotation:2']);
    expect(removedRotations(routine, Number.MAX_SAFE_INTEGER)).not.toContain('signing-key-rotation:3');
  });

  test('when one key of a rotation (the RSA key kept for sign-in sessions) was removed less than an hour ago, then its document stays', () => {
    // The P-256 key of rotation 1 went at 200, long before; its RSA key only at 2000.
    expect(removedRotations(routine, 2000 + HOUR - 1)).toEqual([]);
    expect(removedRotations(routine, 2000 + HOUR)).toEqual(['signing-key-rotation:1']);
  });

  test('when a later rotation retired at once, then the earlier keys count as removed from that moment', () => {
    const atOnce = stored({ RS256: [1000, 2000, 30], ES256: [100, 200, 30] });
    expect(removedRotations(atOnce, 30 + HOUR)).toEqual(['signing-key-rotation:1', 'signing-key-rotation:2']);
  });

  test("when a rotation's activity entry is still to be written, then its document stays until it is", () => {
    const pending = stored({ RS256: [1000, 2000, 3000], ES256: [100, 200, 300] }, [false, true]);
    expect(removedRotations(pending, 3000 + HOUR)).toEqual(['signing-key-rotation:2']);
  });
});
