import { randomBytes } from 'node:crypto';
import type { ActivityAction, ActivityActor, ActivityRepository } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { OwedActivityEntry, UsersRepository } from './users.repository.js';

/** Where a user's owed entries are read, written and taken off. */
export interface OwedActivityStores {
  users: Pick<UsersRepository, 'findOwedActivity' | 'settledOwedActivity'>;
  activity: Pick<ActivityRepository, 'appendOnce'>;
}

/**
 * The entry a change of the user owes the record, under an id drawn now: the change's second (an
 * ObjectId's first four bytes, so the id sorts with its time like any other) and random bytes.
 * Stored with the change, the id is the same for every process that later writes the entry.
 */
export function owedActivityEntry(action: ActivityAction, actor: ActivityActor, at: Date, comments?: string): OwedActivityEntry {
  const seconds = Math.floor(at.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return { id: seconds + randomBytes(8).toString('hex'), action, actor, at, ...(comments !== undefined ? { comments } : {}) };
}

/**
 * Writes the entries the user's changes still owe the record, then takes them off the user.
 * A change and the entry it owes are one write to the user (the lifecycle's); the entry itself is
 * a second write, to the record, which a failing MongoDB or a dying process can miss. Whoever comes
 * next settles it: the API right after the change, any later block, unblock or deletion of the
 * user, and the enrollment worker's sweep (an activation is settled by the API or the sweep). Several may do it at once, or one may die after the
 * entry and before taking it off: each writes under the entry's own id, so the record takes it once.
 * Resolves to how many entries this call added.
 */
export async function settleOwedActivity(stores: OwedActivityStores, ref: UserRef, owed?: OwedActivityEntry[]): Promise<number> {
  const entries = owed ?? (await stores.users.findOwedActivity(ref));
  let added = 0;
  for (const { id, action, actor, comments, at } of entries) {
    if (await stores.activity.appendOnce(id, { actor, action, enterpriseId: ref.enterpriseId, userId: ref.userId, comments }, at))
      added += 1;
  }
  await stores.users.settledOwedActivity(
    ref,
    entries.map((e) => e.id),
  );
  return added;
}
