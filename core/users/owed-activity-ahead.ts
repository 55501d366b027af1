import type { Logger } from '../platform/logger/logger.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { settleOwedActivity, type OwedActivityStores } from './owed-activity.js';
import type { ChangeAhead, OwedActivityEntry, UsersRepository } from './users.repository.js';

/**
 * Entries of changes made in another collection than the user's (a passkey added or removed, a
 * sign-in lock ended): no single write can hold the change and its entry, so the entry is stored
 * on the user first, marked with the change it waits for (`ahead`), and then the change is made.
 * The process that made it writes the entry and takes it off; one whose change was refused takes
 * it off unwritten. An entry whose process died or whose record write failed in between is the
 * enrollment worker's sweep's: after `SWEEPER_GRACE_MS` it asks the change's check (by its name,
 * ChangeChecks) whether the change was made, and writes the entry or takes it off. The other
 * order (change, then entry) would lose the entry to a process dying in between; this one can
 * only mistake a change for made when something else made the same change meanwhile and the
 * process died before taking its entry off (each change's module says when).
 */
export interface OwedAheadStores extends OwedActivityStores {
  users: OwedActivityStores['users'] & Pick<UsersRepository, 'oweActivity'>;
  logger: Pick<Logger, 'warn'>;
}

/** Stores `entry` (and `confirmed`, copies of earlier entries now known made) on the user before its change. False for an unknown user. */
export async function oweAhead(
  stores: Pick<OwedAheadStores, 'users'>,
  ref: UserRef,
  entry: OwedActivityEntry,
  confirmed: OwedActivityEntry[] = [],
): Promise<boolean> {
  return stores.users.oweActivity(ref, [...confirmed, entry]);
}

/**
 * The change was made: writes its entry (and `confirmed`) and takes them off. A failure is logged,
 * never answered: the change stands, and the sweep writes what is left.
 */
export async function settleMadeAhead(
  stores: OwedAheadStores,
  ref: UserRef,
  entry: OwedActivityEntry,
  confirmed: OwedActivityEntry[] = [],
): Promise<void> {
  await settleOwedActivity(stores, ref, [...confirmed, entry], [entry.id]).catch((err: unknown) =>
    stores.logger.warn(
      { err: (err as Error).message, enterpriseId: ref.enterpriseId },
      `${entry.action}: change stored; activity entry not written; the sweep writes it`,
    ),
  );
}

/** The change was refused: its entry is taken off unwritten (if that fails, the sweep's check finds the change not made). */
export async function withdrawAhead(stores: OwedAheadStores, ref: UserRef, entry: OwedActivityEntry): Promise<void> {
  await stores.users
    .settledOwedActivity(ref, [entry.id])
    .catch((err: unknown) =>
      stores.logger.warn(
        { err: (err as Error).message, enterpriseId: ref.enterpriseId },
        `${entry.action}: entry owed ahead left to the sweep`,
      ),
    );
}

/**
 * The user's entries stored ahead of `ahead`'s change, as copies without the mark: for a change
 * that proves that one was made (removing a passkey proves it was added) before it hides it (the
 * passkey is gone, so the sweep's check would find the add not made).
 */
export async function madeEntriesAhead(
  stores: Pick<OwedAheadStores, 'users'>,
  ref: UserRef,
  ahead: ChangeAhead,
): Promise<OwedActivityEntry[]> {
  return (await stores.users.findOwedActivity(ref))
    .filter((e) => e.ahead?.change === ahead.change && e.ahead.key === ahead.key)
    .map(({ ahead: _made, ...entry }) => entry);
}
