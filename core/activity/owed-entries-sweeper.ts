import type { Logger } from '../platform/logger/logger.js';
import { activityEntriesSwept } from '../platform/metrics/business-metrics.js';
import type { ActivityRepository } from './activity.repository.js';
import type { SweptCollection } from './owing-collection.js';

/** Documents taken at a time, per collection. */
const BATCH = 200;
/**
 * How long a sweep holds the documents it took: no other worker's sweep takes them meanwhile, and
 * one whose entries could not be written (or whose worker died) is taken again once it ends.
 */
export const OWED_ENTRIES_LEASE_MS = 60_000;

export interface OwedEntriesSweeperDeps {
  /** Every collection whose changes owe entries (the enrollment worker registers them). */
  collections: SweptCollection[];
  activity: Pick<ActivityRepository, 'appendOnce'>;
  logger: Logger;
  /** An entry owed this long is the sweep's: the API normally writes it within milliseconds. */
  graceMs: number;
}

/**
 * Writes the activity entries of changes whose process did not (MongoDB failed, or the process
 * died, between the change and its entry) and that nobody settled since, in every registered
 * collection; a deleted document is removed once its entry is written. Resolves to how many
 * entries were added (one another process wrote meanwhile is not added twice).
 */
export async function sweepOwedEntries(deps: OwedEntriesSweeperDeps, now = new Date()): Promise<number> {
  const leaseUntil = new Date(now.getTime() + OWED_ENTRIES_LEASE_MS);
  const olderThan = new Date(now.getTime() - deps.graceMs);
  let added = 0;
  let failed = 0;
  let removed = 0;
  for (const collection of deps.collections) {
    const owing = await collection.claimOwing(olderThan, now, leaseUntil, BATCH);
    for (const document of owing) {
      try {
        const count = await document.settle(deps.activity);
        added += count;
        activityEntriesSwept.inc({ outcome: 'appended' }, count);
        activityEntriesSwept.inc({ outcome: 'already' }, document.owed.length - count);
        await document.release();
      } catch (err) {
        // Left on the document and leased: tried again once the lease ends, the others still swept.
        failed += 1;
        activityEntriesSwept.inc({ outcome: 'failed' });
        deps.logger.warn(
          { err: (err as Error).message, collection: collection.name },
          'owed activity entries not written; tried again later',
        );
      }
    }
    removed += await collection.removeSettledDeletions(olderThan);
  }
  if (added > 0 || failed > 0 || removed > 0) deps.logger.info({ added, failed, removed }, 'owed activity sweep of admin changes');
  return added;
}
