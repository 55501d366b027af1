import type { Connection } from 'mongoose';
import { existingIndexes } from './model-registry.js';
import { isMongoError, MONGO_CODES } from './mongo-error-codes.js';

/**
 * Drops one collection's index of this name; false when it has none. By its key, not its name:
 * the local MongoDB-wire server drops an index by name from every collection holding one of that
 * name (`templates.name_1` would take `groups.name_1` with it), and MongoDB accepts either. An
 * index another process dropped first counts as dropped.
 */
export async function dropIndexByKey(connection: Connection, collection: string, name: string): Promise<boolean> {
  const found = (await existingIndexes(connection, collection)).find((index) => index.name === name);
  if (!found) return false;
  try {
    const db = connection.db;
    if (!db) throw new Error('MongoDB is not connected');
    await db.command({ dropIndexes: collection, index: found.key });
  } catch (err) {
    if (!isMongoError(err, MONGO_CODES.IndexNotFound)) throw err;
  }
  return true;
}
