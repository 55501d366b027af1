import { ValidationError } from '../platform/errors/app-error.js';
import { buildSegmentPools, MINIMUM_RULES, type MinimumField } from './otp-charsets.js';
import { CHAR_SET_IDS, type CharSetId, type NormalizedSegment, type OtpSegmentBody } from './otp.types.js';

/** Limits on the sum of segment lengths (4 to 12) (each segment's own 4-12 is in the schema). */
export const OTP_TOTAL_LENGTH = Object.freeze({ min: 4, max: 12 });

function parseCharSets(value: string, field: string): CharSetId[] {
  if (value.length === 0) throw new ValidationError(`${field} must not be empty`);
  const ids: CharSetId[] = [];
  for (const char of value) {
    if (!(CHAR_SET_IDS as readonly string[]).includes(char)) {
      throw new ValidationError(`${field}: unknown identifier ${JSON.stringify(char)} (allowed: ${CHAR_SET_IDS.join(', ')})`);
    }
    if (ids.includes(char as CharSetId)) throw new ValidationError(`${field}: identifier ${JSON.stringify(char)} is repeated`);
    ids.push(char as CharSetId);
  }
  // M already holds both cases; allowing L or U next to it would make minimums ambiguous.
  if (ids.includes('M') && (ids.includes('L') || ids.includes('U'))) {
    throw new ValidationError(`${field}: M cannot be combined with L or U`);
  }
  return ids;
}

/**
 * Applies the cross-field rules (distinct identifiers, M not with L or U, minimums within length, exclusions leaving pools) to one schema-valid segment and returns it normalized.
 * `field` is how the caller names the segment in messages, e.g. `otpSpecs[1]`.
 */
export function normalizeSegment(body: OtpSegmentBody, field: string): NormalizedSegment {
  const charSets = parseCharSets(body.charSets, `${field}.charSets`);
  const minimums = {} as Record<MinimumField, number>;
  for (const rule of MINIMUM_RULES) {
    // A minimum for an absent set is ignored and not counted.
    minimums[rule.field] = rule.appliesWith.some((id) => charSets.includes(id)) ? (body[rule.field] ?? 0) : 0;
  }
  const segment: NormalizedSegment = Object.freeze({
    length: body.length,
    charSets: Object.freeze(charSets),
    ...minimums,
    exclude: Object.freeze([...new Set(body.exclude ?? [])]),
  });

  const sum = MINIMUM_RULES.reduce((total, rule) => total + segment[rule.field], 0);
  if (sum > segment.length) {
    throw new ValidationError(`${field}: sum of applicable minimums (${sum}) must not exceed length (${segment.length})`);
  }

  const pools = buildSegmentPools(segment);
  for (const required of pools.required) {
    if (required.pool.length === 0) {
      const label = MINIMUM_RULES.find((rule) => rule.field === required.field)?.label ?? required.field;
      throw new ValidationError(`${field}.exclude removes every ${label} character but ${required.field} is ${required.count}`);
    }
  }
  if (pools.union.length === 0) throw new ValidationError(`${field}.exclude removes every character of the segment`);
  return segment;
}

/** Normalizes `otpSpecs` in order, then checks the summed length (4 to 12). */
export function normalizeSegments(bodies: readonly OtpSegmentBody[]): NormalizedSegment[] {
  const segments = bodies.map((body, index) => normalizeSegment(body, `otpSpecs[${index}]`));
  const total = segments.reduce((sum, segment) => sum + segment.length, 0);
  if (total < OTP_TOTAL_LENGTH.min || total > OTP_TOTAL_LENGTH.max) {
    throw new ValidationError(`otpSpecs total length must be between ${OTP_TOTAL_LENGTH.min} and ${OTP_TOTAL_LENGTH.max}, got ${total}`);
  }
  return segments;
}
