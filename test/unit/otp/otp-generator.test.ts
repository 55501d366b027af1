import { jest } from '@jest/globals';
import { CHAR_SET_POOLS } from '../../../core/otp/otp-charsets.js';
import { generateOtp } from '../../../core/otp/otp-generator.js';
import { parseGenerateOtpRequest } from '../../../core/otp/otp-request.validator.js';
import type { NormalizedSegment } from '../../../core/otp/otp.types.js';
import { validBody } from './otp-request-fixtures.js';
import { chiSquareCritical, chiSquareUniform, seededRandom } from './statistics.js';

const DIGITS = CHAR_SET_POOLS.N;
const LOWER = CHAR_SET_POOLS.L;
const UPPER = CHAR_SET_POOLS.U;
const SPECIAL = CHAR_SET_POOLS.S;
const EVERY_CHAR = DIGITS + LOWER + UPPER + SPECIAL;

function segmentsOf(otpSpecs: unknown[] | undefined, otpSpec?: string): readonly NormalizedSegment[] {
  return parseGenerateOtpRequest(validBody({ ...(otpSpecs ? { otpSpecs } : {}), ...(otpSpec ? { otpSpec } : {}) })).segments;
}

const countIn = (text: string, pool: string) => [...text].filter((c) => pool.includes(c)).length;

describe('generateOtp: shape', () => {
  test('when the default format is used, then the code is 6 digits', () => {
    const segments = segmentsOf(undefined);
    for (let i = 0; i < 200; i += 1) expect(generateOtp(segments)).toMatch(/^[0-9]{6}$/);
  });

  test.each([
    ['N-4', /^[0-9]{4}$/],
    ['L-5', /^[a-z]{5}$/],
    ['U-7', /^[A-Z]{7}$/],
    ['M-8', /^[a-zA-Z]{8}$/],
    ['LN-9', /^[a-z0-9]{9}$/],
    ['UN-6', /^[A-Z0-9]{6}$/],
    ['MN-6', /^[a-zA-Z0-9]{6}$/],
  ])('when the legacy format is %s, then codes match %s', (otpSpec, shape) => {
    const segments = segmentsOf(undefined, otpSpec);
    for (let i = 0; i < 200; i += 1) expect(generateOtp(segments)).toMatch(shape);
  });

  test('when a segment of 4 uppercase precedes a segment of 4 digits, then letters come first, digits after', () => {
    const segments = segmentsOf([
      { length: 4, charSets: 'U' },
      { length: 4, charSets: 'N' },
    ]);
    for (let i = 0; i < 200; i += 1) expect(generateOtp(segments)).toMatch(/^[A-Z]{4}[0-9]{4}$/);
  });

  test('when M has minimums 3 lowercase and 3 uppercase over length 6, then every code has exactly 3 of each', () => {
    const segments = segmentsOf([{ length: 6, charSets: 'M', minLowercase: 3, minUppercase: 3 }]);
    for (let i = 0; i < 500; i += 1) {
      const code = generateOtp(segments);
      expect([countIn(code, LOWER), countIn(code, UPPER)]).toEqual([3, 3]);
    }
  });

  test('when length 4 has minimums 1,1,1,1 over MNS, then every code has one of each kind', () => {
    const segments = segmentsOf([{ length: 4, charSets: 'MNS', minLowercase: 1, minUppercase: 1, minNumeric: 1, minSpecial: 1 }]);
    for (let i = 0; i < 500; i += 1) {
      const code = generateOtp(segments);
      expect([LOWER, UPPER, DIGITS, SPECIAL].map((pool) => countIn(code, pool))).toEqual([1, 1, 1, 1]);
    }
  });

  test('when characters are excluded, then they never appear', () => {
    const segments = segmentsOf([{ length: 12, charSets: 'UN', minNumeric: 2, exclude: ['0', 'O', '1', 'I'] }]);
    for (let i = 0; i < 2000; i += 1) expect(generateOtp(segments)).not.toMatch(/[0O1I]/);
  });

  test('when segments are invalid for the generator, then it throws instead of producing a weak code', () => {
    const base: NormalizedSegment = {
      length: 4,
      charSets: ['N'],
      minLowercase: 0,
      minUppercase: 0,
      minNumeric: 0,
      minSpecial: 0,
      exclude: [],
    };
    expect(() => generateOtp([])).toThrow('An OTP needs at least one segment');
    expect(() => generateOtp([{ ...base, exclude: [...DIGITS] }])).toThrow('OTP segment pool is empty');
    expect(() => generateOtp([{ ...base, charSets: ['N', 'S'], minSpecial: 1, exclude: [...SPECIAL] }])).toThrow(
      'minimum whose pool is empty',
    );
    expect(() => generateOtp([{ ...base, minNumeric: 5 }])).toThrow('minimums exceed its length');
  });

  test('when codes are generated, then Math.random is never used', () => {
    const spy = jest.spyOn(Math, 'random');
    generateOtp(segmentsOf([{ length: 12, charSets: 'MNS', minSpecial: 2, minNumeric: 2 }]));
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});

/** A random spec that is valid by construction: lengths fit, minimums fit, exclusions cannot empty a pool. */
function randomValidOtpSpecs(rand: () => number): Record<string, unknown>[] {
  const int = (maxInclusive: number) => Math.floor(rand() * (maxInclusive + 1));
  const count = 1 + int(2);
  let spare = 12 - 4 * count;
  return Array.from({ length: count }, () => {
    const extra = int(spare);
    spare -= extra;
    const length = 4 + extra;
    const letters = [[], ['L'], ['U'], ['L', 'U'], ['M']][int(4)];
    const ids = [...letters, ...(rand() < 0.5 ? ['N'] : []), ...(rand() < 0.4 ? ['S'] : [])];
    if (ids.length === 0) ids.push('N');
    for (let i = ids.length - 1; i > 0; i -= 1) {
      const j = int(i);
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    const segment: Record<string, unknown> = { length, charSets: ids.join('') };
    let room = length;
    const fields: Array<[string, boolean]> = [
      ['minLowercase', ids.includes('L') || ids.includes('M')],
      ['minUppercase', ids.includes('U') || ids.includes('M')],
      ['minNumeric', ids.includes('N')],
      ['minSpecial', ids.includes('S')],
    ];
    for (const [field, applies] of fields) {
      if (rand() < 0.3) continue;
      // Minimums of absent sets are sent too, sometimes: they must be ignored.
      const value = applies ? int(Math.min(room, 4)) : int(12);
      if (applies) room -= value;
      segment[field] = value;
    }
    // At most 5 exclusions: no pool (the smallest has 10 characters) can be emptied.
    const exclude = Array.from({ length: int(5) }, () => EVERY_CHAR[int(EVERY_CHAR.length - 1)]);
    if (exclude.length > 0) segment.exclude = exclude;
    return segment;
  });
}

describe('generateOtp: properties over random valid specs', () => {
  test('when 3000 random valid specs are generated, then every code has the right length, pools and minimums', () => {
    const rand = seededRandom(20260521);
    for (let run = 0; run < 3000; run += 1) {
      const otpSpecs = randomValidOtpSpecs(rand);
      const segments = segmentsOf(otpSpecs);
      for (let repeat = 0; repeat < 3; repeat += 1) {
        const code = generateOtp(segments);
        expect(code).toHaveLength(segments.reduce((sum, s) => sum + s.length, 0));
        let offset = 0;
        for (const segment of segments) {
          const part = code.slice(offset, offset + segment.length);
          offset += segment.length;
          const allowed = segment.charSets.map((id) => CHAR_SET_POOLS[id]).join('');
          for (const char of part) {
            if (!allowed.includes(char) || segment.exclude.includes(char)) {
              throw new Error(`${JSON.stringify(char)} in ${JSON.stringify(part)} is outside the pool of ${JSON.stringify(segment)}`);
            }
          }
          const counts = {
            minLowercase: countIn(part, LOWER),
            minUppercase: countIn(part, UPPER),
            minNumeric: countIn(part, DIGITS),
            minSpecial: countIn(part, SPECIAL),
          };
          for (const [field, actual] of Object.entries(counts)) {
            if (actual < segment[field as keyof typeof counts]) throw new Error(`${part} misses ${field} of ${JSON.stringify(segment)}`);
          }
        }
      }
    }
  });
});

describe('generateOtp: uniformity (chi-square at p = 1e-6)', () => {
  test('when 60000 N-6 codes are generated, then each position draws the 10 digits uniformly', () => {
    const segments = segmentsOf(undefined, 'N-6');
    const counts = Array.from({ length: 6 }, () => Array<number>(10).fill(0));
    for (let i = 0; i < 60000; i += 1) {
      const code = generateOtp(segments);
      for (let position = 0; position < 6; position += 1) counts[position][Number(code[position])] += 1;
    }
    for (const positionCounts of counts) expect(chiSquareUniform(positionCounts)).toBeLessThan(chiSquareCritical(9));
  });

  test('when 10000 M-6 codes are generated, then the 52 letters are drawn uniformly', () => {
    const segments = segmentsOf(undefined, 'M-6');
    const pool = CHAR_SET_POOLS.M;
    const counts = Array<number>(pool.length).fill(0);
    for (let i = 0; i < 10000; i += 1) for (const char of generateOtp(segments)) counts[pool.indexOf(char)] += 1;
    expect(counts.every((count) => count > 0)).toBe(true);
    expect(chiSquareUniform(counts)).toBeLessThan(chiSquareCritical(pool.length - 1));
  });

  test('when exclusions shrink a pool, then the remaining characters are still uniform', () => {
    const segments = segmentsOf([{ length: 6, charSets: 'N', exclude: ['0', '1', '7'] }]);
    const allowed = [...'2345689'];
    const counts = Array<number>(allowed.length).fill(0);
    for (let i = 0; i < 10000; i += 1) for (const char of generateOtp(segments)) counts[allowed.indexOf(char)] += 1;
    expect(counts.every((count) => count > 0)).toBe(true);
    expect(chiSquareUniform(counts)).toBeLessThan(chiSquareCritical(allowed.length - 1));
  });
});

describe('generateOtp: positions of guaranteed characters', () => {
  test('when one special is guaranteed among 7 guaranteed digits, then it lands on each of the 8 positions uniformly', () => {
    const segments = segmentsOf([{ length: 8, charSets: 'NS', minNumeric: 7, minSpecial: 1 }]);
    const positions = Array<number>(8).fill(0);
    for (let i = 0; i < 40000; i += 1) {
      const code = generateOtp(segments);
      expect(countIn(code, SPECIAL)).toBe(1);
      positions[[...code].findIndex((c) => SPECIAL.includes(c))] += 1;
    }
    expect(chiSquareUniform(positions)).toBeLessThan(chiSquareCritical(7));
  });

  test('when minSpecial is 1 over NS length 8, then every position is special equally often', () => {
    const segments = segmentsOf([{ length: 8, charSets: 'NS', minSpecial: 1 }]);
    const runs = 40000;
    const specials = Array<number>(8).fill(0);
    for (let i = 0; i < runs; i += 1)
      [...generateOtp(segments)].forEach((c, position) => (specials[position] += SPECIAL.includes(c) ? 1 : 0));
    // Guaranteed slot with probability 1/8, else a draw from 20 characters of which 10 are special.
    const p = 1 / 8 + (7 / 8) * (10 / 20);
    const sigma = Math.sqrt(runs * p * (1 - p));
    for (const count of specials) expect(Math.abs(count - runs * p)).toBeLessThan(6 * sigma);
  });
});
