import { isMongoError, MONGO_CODES } from './mongo-error-codes.js';

/**
 * True for MongoDB's duplicate-key error. Matched on the code only: mongo-java-server does not
 * send `keyValue`, so callers must know from context which unique index was hit.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  return isMongoError(err, MONGO_CODES.DuplicateKey);
}
