import { randomInt, timingSafeEqual } from 'node:crypto';

/** Two random digits (`00` to `99`) the enterprise shows and the user types back. */
export function generateMatchingNumber(): string {
  return String(randomInt(0, 100)).padStart(2, '0');
}

/** Constant-time comparison of the number the user sent with the stored one. */
export function matchesNumber(expected: string, sent: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(sent, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
