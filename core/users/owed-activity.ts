import { randomBytes } from 'node:crypto';
import type { ActivityAction, ActivityActor, ActivityRepository } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { ChangeAhead, OwedActivityEntry, UsersRepository } from './users.repository.js';

/**
 * Whether a change an entry was stored ahead of was made, by the change's name: given to the
 * enrollment worker's sweep by the folders that make such changes (passkeys, sign-in locks).
 */
export type ChangeChecks = Readonly<Record<string, (ref: UserRef, key: string) => Promise<boolean>>>;

/** Where a user's owed entries are read, written and taken off. */
export interface OwedActivityStores {
  users: Pick<UsersRepository, 'findOwedActivity' | 'settledOwedActivity'>;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /** Without them (or without one for its change) an entry stored ahead is left for whoever has one. */
  changeChecks?: ChangeChecks;
}

/**
 * The entry a change of the user owes the record, under an id drawn now: the change's second (an
 * ObjectId's first four bytes, so the id sorts with its time like any other) and random bytes.
 * Stored with the change, the id is the same for every process that later writes the entry.
 */
export function owedActivityEntry(
  action: ActivityAction,
  actor: ActivityActor,
  at: Date,
  comments?: string,
  more: { clientId?: string; ahead?: ChangeAhead } = {},
): OwedActivityEntry {
  const seconds = Math.floor(at.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return {
    id: seconds + randomBytes(8).toString('hex'),
    action,
    actor,
    at,
    ...(more.clientId !== undefined ? { clientId: more.clientId } : {}),
    ...(comments !== undefined ? { comments } : {}),
    ...(more.ahead !== undefined ? { ahead: more.ahead } : {}),
  };
}

/**
 * Writes the entries the user's changes still owe the record, then takes them off the user.
 * A change and the entry it owes are one write to the user (the lifecycle's); the entry itself is
 * a second write, to the record, which a failing MongoDB or a dying process can miss. Whoever comes
 * next settles it: the API right after the change, any later block, unblock or deletion of the
 * user, and the enrollment worker's sweep (an activation is settled by the API or the sweep). Several may do it at once, or one may die after the
 * entry and before taking it off: each writes under the entry's own id, so the record takes it once.
 *
 * An entry stored ahead of its change (owed-activity-ahead.ts) is written once the change is known
 * made: by the caller that made it (`made`, entry ids), by a copy stored without `ahead` (one id
 * may be on the user twice), or by the store's change check, which also takes off the entries of
 * changes that were not made. Without a check it is left as it is. Resolves to how many entries
 * this call added.
 */
export async function settleOwedActivity(
  stores: OwedActivityStores,
  ref: UserRef,
  owed?: OwedActivityEntry[],
  made: readonly string[] = [],
): Promise<number> {
  return (await settleOwedActivityCounted(stores, ref, owed, made)).added;
}

/** What a settling did with the entries it was given (one id counted once). */
export interface OwedActivitySettled {
  /** Written to the record by this call. */
  added: number;
  /** Found in the record already (another process wrote it). */
  already: number;
  /** Taken off unwritten: stored ahead of a change that was not made. */
  dropped: number;
  /** Left on the user: stored ahead of a change no check was given for. */
  left: number;
}

/** settleOwedActivity, telling what became of each entry (for the sweep's counts). */
export async function settleOwedActivityCounted(
  stores: OwedActivityStores,
  ref: UserRef,
  owed?: OwedActivityEntry[],
  made: readonly string[] = [],
): Promise<OwedActivitySettled> {
  const entries = owed ?? (await stores.users.findOwedActivity(ref));
  const counts = { added: 0, already: 0, dropped: 0, left: 0 };
  const settled: string[] = [];
  for (const id of new Set(entries.map((e) => e.id))) {
    const copies = entries.filter((e) => e.id === id);
    const entry = copies.find((e) => e.ahead === undefined) ?? (copies[0] as OwedActivityEntry);
    const wasMade = entry.ahead === undefined || made.includes(id) ? true : await changeMade(stores, ref, entry.ahead);
    if (wasMade === undefined) counts.left += 1;
    else if (!wasMade) counts.dropped += 1;
    else if (await appendOwedEntry(stores, ref, entry)) counts.added += 1;
    else counts.already += 1;
    if (wasMade !== undefined) settled.push(id);
  }
  await stores.users.settledOwedActivity(ref, settled);
  return counts;
}

/** Writes one owed entry to the record under its id (still owed on the user): false when the record had it. */
export async function appendOwedEntry(
  stores: Pick<OwedActivityStores, 'activity'>,
  ref: UserRef,
  entry: OwedActivityEntry,
): Promise<boolean> {
  const { id, action, actor, clientId, comments, at } = entry;
  return stores.activity.appendOnce(id, { actor, action, enterpriseId: ref.enterpriseId, userId: ref.userId, clientId, comments }, at);
}

/** What the store's check says of the change; undefined when it has none for that change. */
async function changeMade(stores: OwedActivityStores, ref: UserRef, ahead: ChangeAhead): Promise<boolean | undefined> {
  const checks = stores.changeChecks;
  return checks && Object.hasOwn(checks, ahead.change) ? checks[ahead.change]?.(ref, ahead.key) : undefined;
}
