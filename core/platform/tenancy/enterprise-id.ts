/**
 * Enterprises are the tenants of a deployment: every client belongs to one, and users with
 * everything tied to them (OTPs, deliveries, activation, limits) belong to the client's
 * enterprise. A deployment that never names one has the single enterprise `default`.
 */
export const DEFAULT_ENTERPRISE_ID = 'default';

/** Same alphabet as userIds; no `:`, so `<enterpriseId>:<userId>` keys cannot collide. */
export const ENTERPRISE_ID_RE = /^[A-Za-z0-9._@-]{1,64}$/;

/** The tenant a read or write is confined to. */
export interface EnterpriseScope {
  enterpriseId: string;
}

/** A user is named by both ids: the same userId may exist in two enterprises. */
export interface UserRef extends EnterpriseScope {
  userId: string;
}

/** One string per user across enterprises, for rate-limit and cache keys. */
export const userKey = (ref: UserRef): string => `${ref.enterpriseId}:${ref.userId}`;

/** The user a userKey names (enterpriseIds hold no `:`, so the first one splits the two). */
export function userRefFromKey(key: string): UserRef {
  const at = key.indexOf(':');
  return { enterpriseId: key.slice(0, at), userId: key.slice(at + 1) };
}

/**
 * The user as bound into digests and encryption contexts. The default enterprise keeps the bare
 * userId, so data written before enterprises existed still verifies and decrypts; other
 * enterprises add a NUL (never part of a userId), so the two forms cannot meet.
 */
export const userSubject = (ref: UserRef): string =>
  ref.enterpriseId === DEFAULT_ENTERPRISE_ID ? ref.userId : `${ref.enterpriseId}\u0000${ref.userId}`;

/** A client is named by its id within its enterprise. */
export interface ClientRef extends EnterpriseScope {
  clientId: string;
}
