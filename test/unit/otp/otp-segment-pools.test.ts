import { buildSegmentPools, segmentPoolsOf } from '../../../core/otp/otp-charsets.js';
import type { NormalizedSegment } from '../../../core/otp/otp.types.js';

const segment = (overrides: Partial<NormalizedSegment> = {}): NormalizedSegment => ({
  charSets: ['N'],
  length: 6,
  minLowercase: 0,
  minUppercase: 0,
  minNumeric: 0,
  minSpecial: 0,
  exclude: [],
  ...overrides,
});

describe('segmentPoolsOf', () => {
  test('when two segments have the same shape, then they share the pools, equal to freshly built ones', () => {
    const pools = segmentPoolsOf(segment());
    expect(segmentPoolsOf(segment({ length: 8 }))).toBe(pools);
    expect(pools).toEqual(buildSegmentPools(segment()));
    expect(Object.isFrozen(pools.union)).toBe(true);
  });

  test('when exclusions, sets or minimums differ, then each shape gets its own pools', () => {
    const shapes = [
      segment(),
      segment({ exclude: ['0'] }),
      segment({ charSets: ['N', 'U'] }),
      segment({ charSets: ['N', 'U'], minUppercase: 2 }),
      segment({ charSets: ['N', 'U'], minNumeric: 2 }),
    ];
    for (const shape of shapes) expect(segmentPoolsOf(shape)).toEqual(buildSegmentPools(shape));
    expect(new Set(shapes.map(segmentPoolsOf)).size).toBe(shapes.length);
    expect(segmentPoolsOf(segment({ exclude: ['0'] })).union).not.toContain('0');
  });
});
