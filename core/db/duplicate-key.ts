/**
 * True for MongoDB's duplicate-key error. Matched on the code only: mongo-java-server does not
 * send `keyValue`, so callers must know from context which unique index was hit.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
