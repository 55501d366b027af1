import { randomInt } from 'node:crypto';
import { segmentPoolsOf } from './otp-charsets.js';
import type { NormalizedSegment } from './otp.types.js';

// crypto.randomInt rejects out-of-range draws internally, so every pick is uniform (no modulo bias).
function pick(pool: readonly string[]): string {
  return pool[randomInt(pool.length)];
}

/** Fisher-Yates: every permutation equally likely, so guaranteed characters land anywhere. */
function shuffleInPlace(chars: string[]): string[] {
  for (let i = chars.length - 1; i > 0; i -= 1) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars;
}

function generateSegment(segment: NormalizedSegment): string {
  const { union, required } = segmentPoolsOf(segment);
  const chars: string[] = [];
  for (const { pool, count } of required) {
    if (pool.length === 0) throw new Error('OTP segment has a minimum whose pool is empty; validate segments first');
    for (let i = 0; i < count; i += 1) chars.push(pick(pool));
  }
  if (chars.length > segment.length) throw new Error('OTP segment minimums exceed its length; validate segments first');
  if (union.length === 0) throw new Error('OTP segment pool is empty; validate segments first');
  while (chars.length < segment.length) chars.push(pick(union));
  return shuffleInPlace(chars).join('');
}

/**
 * A fresh OTP: segments concatenated in order, each meeting its minimums at
 * uniformly random positions. Expects segments from parseGenerateOtpRequest.
 */
export function generateOtp(segments: readonly NormalizedSegment[]): string {
  if (segments.length === 0) throw new Error('An OTP needs at least one segment');
  return segments.map(generateSegment).join('');
}
