import type { Connection } from 'mongoose';
import { existingIndexes } from '../platform/db/model-registry.js';
import { isMongoError, MONGO_CODES } from '../platform/db/mongo-error-codes.js';

/**
 * Indexes an older version declared and this one replaced by another. Unlike the pre-enterprise
 * indexes, none of them refuses a write this version makes, so a process starts beside them; the
 * migration command drops them, since each costs every insert some work and serves no query.
 */
export const SUPERSEDED_INDEXES: [collection: string, index: string][] = [
  // The activity record is ordered by time, then id (an id alone orders entries of different
  // processes only to the second).
  ['activity', 'enterpriseId_1_userId_1__id_-1'],
];

/** Drops every superseded index still present; returns `collection.index` of each dropped. */
export async function dropSupersededIndexes(connection: Connection): Promise<string[]> {
  const dropped: string[] = [];
  for (const [collection, index] of SUPERSEDED_INDEXES) {
    if (!(await existingIndexes(connection, collection)).some((i) => i.name === index)) continue;
    try {
      await connection.collection(collection).dropIndex(index);
      dropped.push(`${collection}.${index}`);
    } catch (err) {
      // Another migration run dropped it first.
      if (!isMongoError(err, MONGO_CODES.IndexNotFound)) throw err;
    }
  }
  return dropped;
}
