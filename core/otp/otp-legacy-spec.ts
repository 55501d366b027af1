import { ValidationError } from '../platform/errors/app-error.js';
import type { CharSetId, NormalizedSegment } from './otp.types.js';

/** Used when neither otpSpecs nor otpSpec is sent. */
export const DEFAULT_LEGACY_OTP_SPEC = 'N-6';

const LEGACY_PATTERN = /^(N|L|U|M|LN|UN|MN)-([4-9])$/;

/**
 * Legacy `<set>-<x>` as one segment: the combined sets are the union and legacy
 * formats have no minimums or exclusions, so the new generator serves both formats.
 */
export function legacySpecToSegment(otpSpec: string): NormalizedSegment {
  const match = LEGACY_PATTERN.exec(otpSpec);
  if (!match) throw new ValidationError(`otpSpec must match ${LEGACY_PATTERN.source}`);
  return Object.freeze({
    length: Number(match[2]),
    charSets: Object.freeze([...match[1]] as CharSetId[]),
    minLowercase: 0,
    minUppercase: 0,
    minNumeric: 0,
    minSpecial: 0,
    exclude: Object.freeze([]),
  });
}
