import { randomUUID } from 'node:crypto';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { drawOwedEntry } from '../activity/owed-entries.js';
import type { GroupsRepository } from '../groups/groups.repository.js';
import { ConflictError, NotFoundError, UnavailableError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { GroupMembers, UsersRepository } from './users.repository.js';
import type { GroupOwner } from '../groups/group-owner.js';

/**
 * How long a deletion's marker keeps the group from taking members: far above the milliseconds a
 * deletion takes, short enough that a deletion which died after marking blocks nobody for long.
 */
export const DELETION_MARKER_TTL_MS = 60_000;
/**
 * The deletion removes the group only while its marker still has this long to live, so a process
 * whose clock runs up to this much ahead of the deletion's still reads the marker as live.
 */
export const CLOCK_MARGIN_MS = 30_000;

/*
 * Deletion against enrollment and PATCH (docs/users.md, "Groups being deleted"). No transaction
 * ties a user to its groups, so each side writes, then reads what the other writes:
 * - the deletion marks the group (a conditional update), counts the live users naming it, then
 *   removes the group only if its own marker is still there and live for CLOCK_MARGIN_MS more;
 * - enrollment and a PATCH that sets groups refuse a live-marked group like a missing one, and
 *   after their write read the groups again: one missing or live-marked, they undo the write.
 * - a PATCH's undo writes groups back without checking them, so the PATCH's write also stores,
 *   as GroupLeaving entries (users.repository.ts) live for DELETION_MARKER_TTL_MS, every group
 *   its undo may write back (the old values of the group fields it changes), and the count
 *   counts a user holding a live entry for the group. The PATCH takes its entries off after its
 *   re-read found its groups, or in its undo's write, which is made only while they are live for
 *   CLOCK_MARGIN_MS more (past that the undo gives up: 503, logged).
 * Why no interleaving leaves a live user naming a removed group:
 * - a group the user's write names: the user's second read came either after the mark was
 *   written, and then found the marker (it stays from the mark to the removal, and the removal
 *   needs it live, so any clock less than CLOCK_MARGIN_MS ahead reads it as live) or no group,
 *   and undid the write; or before the mark, so the user's write also came before the count,
 *   which saw the user and refused.
 * - a group an undo writes back (G, named before the PATCH): from the PATCH's write to its undo
 *   the user names G in a live entry, before and after it in its fields, so no count in between
 *   misses the user. A count that reads the entry as lapsed ran later than the undo could: the
 *   undo needs the entry live CLOCK_MARGIN_MS ahead on its own clock. Entries are per PATCH, so a
 *   PATCH taking its own off leaves another PATCH's in-flight ones.
 * - the undo itself restores only fields no later PATCH changed, and a later PATCH wrote its own
 *   entries for what it replaced; a failed undo stops with the write in place and says so.
 * A deletion that dies after marking leaves a marker that lapses after DELETION_MARKER_TTL_MS; a
 * PATCH that dies after its write leaves entries that lapse as long (only a deletion of the group
 * answers 409 meanwhile) and that the user's next PATCH takes off.
 */

/**
 * Deletes one owner's group (absent owner: the shared one) that no live user names (DELETED users keep their history), recorded in the
 * activity record. A group in use stays: users would otherwise refer to a group that no longer
 * exists and fail enrollment's rules on their next update. The removal stores the entry it owes
 * and the entry is written right after (owing-collection.ts): the answer does not wait on the
 * record, an entry it refused is written by the enrollment worker's sweep, and the group's
 * document goes once its entry is written (every read treats it as gone before).
 */
export async function deleteGroup(
  deps: {
    groups: Pick<
      GroupsRepository,
      'findGroup' | 'enterprisesWithOwnGroup' | 'markForDeletion' | 'unmarkForDeletion' | 'removeGroupStillMarked' | 'owedActivity'
    >;
    users: Pick<UsersRepository, 'countLiveInGroup'>;
    activity: Pick<ActivityRepository, 'appendOnce'>;
    logger: Pick<Logger, 'warn'>;
    now?: () => Date;
  },
  name: string,
  owner: GroupOwner = undefined,
): Promise<void> {
  const now = deps.now ?? (() => new Date());
  const key = { name, owner };
  const markedAt = now();
  const token = randomUUID();
  if (
    !(await deps.groups.markForDeletion(name, owner, { token, until: new Date(markedAt.getTime() + DELETION_MARKER_TTL_MS) }, markedAt))
  ) {
    if (!(await deps.groups.findGroup(name, owner))) {
      // Deleting again finishes what an earlier deletion left owed (its entry, the document).
      await deps.groups.owedActivity.settleAfterChange(deps, key);
      throw new NotFoundError('Group not found');
    }
    throw new ConflictError(`Group ${name} is being deleted`);
  }
  let inUse: number;
  try {
    // Entries live at the marking count (conservative: the count runs later). The users counted
    // are those whose name means this group: an own group's enterprise's users; for a shared one,
    // the users of every enterprise without its own group of the name, read after the mark (an
    // enterprise whose own group goes later counts in that group's deletion, and its users'
    // name means this marked group from then on, which takes no members).
    const who: GroupMembers =
      owner === undefined ? { exceptEnterprises: await deps.groups.enterprisesWithOwnGroup(name) } : { enterpriseId: owner };
    inUse = await deps.users.countLiveInGroup(name, who, markedAt);
  } catch (err) {
    // Best effort: a marker left behind lapses by itself.
    await deps.groups.unmarkForDeletion(name, owner, token).catch(() => undefined);
    throw err;
  }
  if (inUse > 0) {
    await deps.groups.unmarkForDeletion(name, owner, token);
    throw new ConflictError(`Group ${name} is in use by ${inUse} user${inUse === 1 ? '' : 's'}`);
  }
  const removedAt = now();
  const owed = drawOwedEntry('group.deleted', { type: 'admin' }, removedAt);
  if (!(await deps.groups.removeGroupStillMarked(name, owner, token, new Date(removedAt.getTime() + CLOCK_MARGIN_MS), owed))) {
    // Too slow: readers may already take the marker as lapsed, so the count above proves nothing.
    await deps.groups.unmarkForDeletion(name, owner, token);
    throw new UnavailableError('Service unavailable: the group deletion took too long; retry', { retryAfterSeconds: 1 });
  }
  await deps.groups.owedActivity.settleAfterChange(deps, key);
}
