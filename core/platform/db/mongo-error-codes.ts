/**
 * MongoDB server error codes this service reacts to (failover codes: store-unavailable.ts). Errors are matched by code, never by
 * message: the wording differs between MongoDB versions and between MongoDB and the local
 * MongoDB-wire server, the codes do not.
 */
export const MONGO_CODES = {
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  MaxTimeMSExpired: 50,
  CommandNotFound: 59,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  DuplicateKey: 11000,
} as const;

/** True when `err` is a MongoDB error with this code. */
export function isMongoError(err: unknown, code: number): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
