import type { Connection } from 'mongoose';
import { dropIndexByKey } from '../platform/db/drop-index.js';

/**
 * Indexes an older version declared and this one replaced by another. Unlike the pre-enterprise
 * indexes, none of them lets a wrong write in or loses data, so a process starts beside them; the
 * migration command drops them, since each costs every insert some work and serves no query.
 */
export const SUPERSEDED_INDEXES: [collection: string, index: string][] = [
  // The activity record is ordered by time, then id (an id alone orders entries of different
  // processes only to the second).
  ['activity', 'enterpriseId_1_userId_1__id_-1'],
  // Template names are unique per owner (enterpriseId_1_name_1). Until this one goes, a template
  // whose name another owner already uses is refused as taken (409); nothing else changes.
  ['templates', 'name_1'],
  // Group names are unique per owner (enterpriseId_1_name_1, which keeps one shared group per
  // name: a missing enterpriseId is indexed as null). Until this one goes, a group whose name
  // another owner already uses is refused as taken (409); nothing else changes.
  ['groups', 'name_1'],
];

/** Drops every superseded index still present; returns `collection.index` of each dropped. */
export async function dropSupersededIndexes(connection: Connection): Promise<string[]> {
  const dropped: string[] = [];
  for (const [collection, index] of SUPERSEDED_INDEXES) {
    if (await dropIndexByKey(connection, collection, index)) dropped.push(`${collection}.${index}`);
  }
  return dropped;
}
