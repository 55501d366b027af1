import { buildSegmentPools } from './otp-charsets.js';
import type { NormalizedSegment } from './otp.types.js';

/**
 * Whether `code` is one the generator could have drawn for these segments: the right length,
 * each segment's characters from its pools, its minimums met. A test client's fixed code must
 * fit the format asked for, or the caller would test against codes production never sends.
 */
export function fitsOtpFormat(code: string, segments: readonly NormalizedSegment[]): boolean {
  const chars = [...code];
  let offset = 0;
  for (const segment of segments) {
    const part = chars.slice(offset, offset + segment.length);
    offset += segment.length;
    if (part.length !== segment.length) return false;
    const { union, required } = buildSegmentPools(segment);
    const allowed = new Set(union);
    if (!part.every((c) => allowed.has(c))) return false;
    for (const { pool, count } of required) {
      const inPool = new Set(pool);
      if (part.filter((c) => inPool.has(c)).length < count) return false;
    }
  }
  return offset === chars.length;
}
