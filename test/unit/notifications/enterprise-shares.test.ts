import { createEnterpriseShares, type SharedPlace } from '../../../core/notifications/enterprise-shares.js';

const placeOf = (taken: ReturnType<ReturnType<typeof createEnterpriseShares>['take']>): SharedPlace => {
  if (typeof taken === 'string') throw new Error(`refused: ${taken}`);
  return taken;
};

describe('enterprise shares of a process-wide pool', () => {
  test('when one enterprise is alone, then it takes the whole pool and meets the pool’s own limit', () => {
    const shares = createEnterpriseShares({ capacity: 4, sharePercent: 25 });
    for (let i = 0; i < 4; i += 1) placeOf(shares.take('acme')).lendable(() => undefined);
    expect(shares.take('acme')).toBe('process-full');
    expect(shares.held()).toBe(4);
  });

  test('when the pool is full, then an enterprise below its share takes the oldest lendable place of the one furthest above its share', () => {
    const shares = createEnterpriseShares({ capacity: 4, sharePercent: 25 });
    const letGo: string[] = [];
    // acme's first place is still setting up: it is never taken back.
    placeOf(shares.take('acme'));
    for (const name of ['a2', 'a3']) placeOf(shares.take('acme')).lendable(() => letGo.push(name));
    placeOf(shares.take('globex')).lendable(() => letGo.push('g1'));

    placeOf(shares.take('initech'));
    expect(letGo).toEqual(['a2']);
    expect([shares.heldBy('acme'), shares.heldBy('globex'), shares.heldBy('initech')]).toEqual([2, 1, 1]);
    // acme is still above its share of one; globex and initech are at theirs.
    expect(shares.take('globex')).toBe('enterprise-share');
    placeOf(shares.take('umbrella'));
    expect(letGo).toEqual(['a2', 'a3']);
    // Only acme's place still setting up is above a share now, and it is not lendable.
    expect(shares.take('hooli')).toBe('process-full');
  });

  test('when a place is released twice or after being taken back, then it is counted once', () => {
    const shares = createEnterpriseShares({ capacity: 1, sharePercent: 100 });
    const place = placeOf(shares.take('acme'));
    place.release();
    place.release();
    expect(shares.held()).toBe(0);
    placeOf(shares.take('acme'));
    // 100%: the shares are off, the pool's limit is the only one.
    expect(shares.take('globex')).toBe('process-full');
  });
});
