import type { Logger } from '../platform/logger/logger.js';
import { activityEntriesSwept } from '../platform/metrics/business-metrics.js';
import { settleOwedActivityCounted, type OwedActivityStores } from './owed-activity.js';
import type { UsersRepository } from './users.repository.js';

/** Users taken at a time. */
const BATCH = 200;
/**
 * How long a sweep holds the users it took: no other worker's sweep takes them meanwhile, and a
 * user whose entries could not be written (or whose worker died) is taken again once it ends.
 */
export const OWED_ACTIVITY_LEASE_MS = 60_000;

export interface OwedActivitySweeperDeps {
  users: OwedActivityStores['users'] & Pick<UsersRepository, 'claimOwedActivity' | 'releaseOwedActivity'>;
  activity: OwedActivityStores['activity'];
  /** The checks of the changes entries are stored ahead of (owed-activity-ahead.ts). */
  changeChecks?: OwedActivityStores['changeChecks'];
  logger: Logger;
  /** An entry owed this long is the sweep's: the API normally writes it within milliseconds. */
  graceMs: number;
}

/**
 * Writes the activity entries of user changes (blocks, unblocks, deletions, activations, PATCHes,
 * passkeys added or removed, sign-in locks ended) whose process did not (MongoDB failed, or the
 * process died, between the change and its entry) and that nobody repeated: so the record of who
 * changed a user never depends on a retry. An entry stored ahead of its change is written when
 * the change's check finds it made, and taken off when not. Resolves to how many
 * entries were added (an entry another process wrote meanwhile is not added twice).
 */
export async function sweepOwedActivity(deps: OwedActivitySweeperDeps, now = new Date()): Promise<number> {
  const leaseUntil = new Date(now.getTime() + OWED_ACTIVITY_LEASE_MS);
  const olderThan = new Date(now.getTime() - deps.graceMs);
  const owing = await deps.users.claimOwedActivity(olderThan, now, leaseUntil, BATCH);
  let added = 0;
  let failed = 0;
  for (const { owedActivity, ...ref } of owing) {
    try {
      // A user taken for an old entry may also hold one stored ahead of a change still under way:
      // that one is judged once it is past the grace period too.
      const due = owedActivity.filter((e) => e.ahead === undefined || e.at < olderThan);
      const settled = await settleOwedActivityCounted(deps, ref, due);
      added += settled.added;
      activityEntriesSwept.inc({ outcome: 'appended' }, settled.added);
      activityEntriesSwept.inc({ outcome: 'already' }, settled.already);
      activityEntriesSwept.inc({ outcome: 'dropped' }, settled.dropped);
      await deps.users.releaseOwedActivity(ref, leaseUntil);
    } catch (err) {
      // Left on the user and leased: tried again once the lease ends, the other users still swept.
      failed += 1;
      activityEntriesSwept.inc({ outcome: 'failed' });
      deps.logger.warn(
        { err: (err as Error).message, enterpriseId: ref.enterpriseId },
        'owed activity entries not written; tried again later',
      );
    }
  }
  if (owing.length > 0) deps.logger.info({ added, failed }, 'owed activity sweep');
  return added;
}
