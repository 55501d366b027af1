import { createHash, timingSafeEqual } from 'node:crypto';

/** A configured secret, kept hashed: compared with `presentedMatches`. */
export const secretDigest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether a presented token is the secret. Both sides are hashed first, so the constant-time
 * comparison also hides the secret's length.
 */
export const presentedMatches = (presented: string | undefined, expected: Buffer) =>
  presented !== undefined && timingSafeEqual(secretDigest(presented), expected);
