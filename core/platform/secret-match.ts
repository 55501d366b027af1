import { createHash, timingSafeEqual } from 'node:crypto';

/** A configured secret, kept hashed: compared with `presentedMatches`. */
export const secretDigest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether a presented token is the secret. Both sides are hashed first, so the constant-time
 * comparison also hides the secret's length.
 */
export const presentedMatches = (presented: string | undefined, expected: Buffer) =>
  presented !== undefined && timingSafeEqual(secretDigest(presented), expected);

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other header. */
export const bearerTokenOf = (authorization: string | undefined): string | undefined =>
  /^Bearer (.+)$/i.exec(authorization?.trim() ?? '')?.[1];

/**
 * The check of METRICS_TOKEN, shared by the API's `/metrics` and the workers' metrics ports:
 * without a token configured every caller passes.
 */
export function metricsTokenCheck(metricsToken: string | undefined): (authorization: string | undefined) => boolean {
  if (metricsToken === undefined) return () => true;
  const expected = secretDigest(metricsToken);
  return (authorization) => presentedMatches(bearerTokenOf(authorization), expected);
}

/** The challenge of a refused scrape (RFC 6750). */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';
