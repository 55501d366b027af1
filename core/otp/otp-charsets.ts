import type { CharSetId, NormalizedSegment } from './otp.types.js';

const DIGITS = '0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const SPECIAL = '!@#$%&*-_=';

/** Characters of each charSets identifier. */
export const CHAR_SET_POOLS: Readonly<Record<CharSetId, string>> = Object.freeze({
  N: DIGITS,
  L: LOWER,
  U: UPPER,
  M: LOWER + UPPER,
  S: SPECIAL,
});

export type MinimumField = 'minLowercase' | 'minUppercase' | 'minNumeric' | 'minSpecial';

/** Each minimum, the identifiers that make it apply and the characters that satisfy it. */
export const MINIMUM_RULES: ReadonlyArray<{ field: MinimumField; appliesWith: readonly CharSetId[]; chars: string; label: string }> = [
  { field: 'minLowercase', appliesWith: ['L', 'M'], chars: LOWER, label: 'lowercase' },
  { field: 'minUppercase', appliesWith: ['U', 'M'], chars: UPPER, label: 'uppercase' },
  { field: 'minNumeric', appliesWith: ['N'], chars: DIGITS, label: 'numeric' },
  { field: 'minSpecial', appliesWith: ['S'], chars: SPECIAL, label: 'special' },
];

export interface SegmentPools {
  /** Every character the segment may contain, exclusions removed, without duplicates. */
  readonly union: readonly string[];
  /** For each minimum above zero: how many characters must come from which pool. */
  readonly required: ReadonlyArray<{ readonly field: MinimumField; readonly count: number; readonly pool: readonly string[] }>;
}

function without(chars: string, excluded: ReadonlySet<string>): string[] {
  return [...chars].filter((c) => !excluded.has(c));
}

// Pools by segment shape: nearly every request asks for one of a few shapes (N-6 above all), so
// the character arrays are built once rather than on every code. Bounded: emptied when full.
const poolsByShape = new Map<string, SegmentPools>();
const MAX_CACHED_SHAPES = 1000;

/** The pools a segment draws from (shared and frozen); an empty pool is a validation error upstream. */
export function segmentPoolsOf(segment: NormalizedSegment): SegmentPools {
  const shape = JSON.stringify([segment.charSets, segment.exclude, ...MINIMUM_RULES.map((rule) => segment[rule.field])]);
  let pools = poolsByShape.get(shape);
  if (pools === undefined) {
    const built = buildSegmentPools(segment);
    pools = Object.freeze({
      union: Object.freeze(built.union),
      required: Object.freeze(built.required.map((r) => Object.freeze({ ...r, pool: Object.freeze(r.pool) }))),
    });
    if (poolsByShape.size >= MAX_CACHED_SHAPES) poolsByShape.clear();
    poolsByShape.set(shape, pools);
  }
  return pools;
}

/** The pools a segment draws from; an empty pool here is a validation error upstream. */
export function buildSegmentPools(segment: NormalizedSegment): SegmentPools {
  const excluded = new Set(segment.exclude);
  const union = [...new Set(segment.charSets.flatMap((id) => without(CHAR_SET_POOLS[id], excluded)))];
  const required = MINIMUM_RULES.filter((rule) => segment[rule.field] > 0).map((rule) => ({
    field: rule.field,
    count: segment[rule.field],
    pool: without(rule.chars, excluded),
  }));
  return { union, required };
}
