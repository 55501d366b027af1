import { randomUUID } from 'node:crypto';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { ConflictError, NotFoundError, UnavailableError, ValidationError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import { CLOCK_MARGIN_MS, DELETION_MARKER_TTL_MS } from './group-deletion.service.js';
import { userExists } from './enrollment.service.js';
import { owedActivityEntry, settleOwedActivity } from './owed-activity.js';
import { reversalOf } from './patch-reversal.js';
import type { User } from './user.types.js';
import type { UserUpdateRequest } from './user-update-request.validator.js';
import type { GroupLeaving, UserChanges, UsersRepository } from './users.repository.js';

export interface UserUpdateDeps {
  users: Pick<
    UsersRepository,
    'findUser' | 'findLiveByMobile' | 'applyChanges' | 'takeOffGroupsLeaving' | 'findOwedActivity' | 'settledOwedActivity'
  >;
  /** The names a user of the enterprise may not join: its own group of the name, else the shared one (groups.repository.ts). */
  groups: { findMissingGroupNames: (enterpriseId: string, names: string[]) => Promise<string[]> };
  activity: Pick<ActivityRepository, 'appendOnce'>;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => Date;
}

// The enrollment's messages and label, for the same rules.
const conflict = (message: string) => new ConflictError(message, { error: 'Invalid data.' });
const mobileHeld = () => conflict('Mobile number already registered');
const missingGroup = (name: string) => conflict(`The group name : ${name} does not exist in the system.`);

/** The groups a patch sets: only these must exist (a group deleted since enrollment does not block a name change). */
const groupsSetBy = (changes: UserChanges): string[] => [
  ...(changes.primaryGroup !== undefined ? [changes.primaryGroup] : []),
  ...(changes.secondaryGroups ?? []),
];

/** The groups an undo of the patch may write back: the old values of the group fields it changes. */
const groupsUndoMayRestore = (before: User, changes: UserChanges): string[] => [
  ...(changes.primaryGroup !== undefined ? [before.primaryGroup] : []),
  ...(changes.secondaryGroups !== undefined ? before.secondaryGroups : []),
];

/** What a stored patch left on the user for its undo: its GroupLeaving entries' id and lapse, its owed activity entry's id. */
interface PatchMarks {
  id: string;
  until: Date;
  owed: string;
}

/** Concurrent patches of one user each retry on the state the other left; past this, 503. */
const MAX_ROUNDS = 5;

/** Only what differs from the user as stored: a patch that changes nothing writes nothing. */
function effectiveChanges(user: User, changes: UserChanges): UserChanges {
  const differs = (field: keyof UserChanges): boolean => {
    const next = changes[field];
    if (next === undefined) return false;
    const current = user[field];
    if (next === null) return current !== undefined;
    return Array.isArray(next) ? JSON.stringify(next) !== JSON.stringify(current) : next !== current;
  };
  return Object.fromEntries(Object.entries(changes).filter(([field]) => differs(field as keyof UserChanges))) as UserChanges;
}

/**
 * PATCH of a user by a client of its enterprise: names, contacts and groups under enrollment's
 * rules, checked against the user as it is when the change is written (a conditional update on
 * `updatedAt`, retried after a concurrent change), recorded in the activity record: the entry is
 * owed on the user in the change's own write and written right after (owed-activity.ts), so a
 * record that cannot be written leaves the answer 200 and the entry to the enrollment worker's sweep.
 */
export function createUserUpdateService(deps: UserUpdateDeps) {
  const now = deps.now ?? (() => new Date());

  /** Enrollment's business rules, in its order: primary among secondaries, missing group, mobile held. */
  async function check(ref: UserRef, user: User, changes: UserChanges): Promise<void> {
    const primary = changes.primaryGroup ?? user.primaryGroup;
    const secondaries = changes.secondaryGroups ?? user.secondaryGroups;
    if (secondaries.includes(primary)) throw conflict('Primary and secondary group name cannot be same.');
    const [missing] = await deps.groups.findMissingGroupNames(ref.enterpriseId, groupsSetBy(changes));
    if (missing !== undefined) throw missingGroup(missing);
    const emailAfter = changes.emailId === undefined ? user.emailId : (changes.emailId ?? undefined);
    const mobileAfter = changes.mobileNumber === undefined ? user.mobileNumber : (changes.mobileNumber ?? undefined);
    // A user who can be reached keeps a way to be reached (activation re-issues, OTPs).
    if ((user.emailId !== undefined || user.mobileNumber !== undefined) && emailAfter === undefined && mobileAfter === undefined) {
      throw new ValidationError(`[Invalid field ${changes.emailId === null ? 'emailId' : 'mobileNumber'}]`, { error: 'Invalid data.' });
    }
    if (typeof changes.mobileNumber === 'string') {
      const holder = await deps.users.findLiveByMobile(ref, changes.mobileNumber);
      if (holder && holder.userId !== ref.userId) throw mobileHeld();
    }
  }

  /**
   * Undoes a stored patch whose groups went away meanwhile, on the user as it is now (a later
   * patch may have landed): each field back to its value before the patch, unless changed again
   * since. If the old mobile number went to another user meanwhile, the new one stays. The write
   * takes the patch's GroupLeaving entries and its owed activity entry off and is made only while
   * they are live CLOCK_MARGIN_MS ahead (group-deletion.service.ts); false when it could not be made.
   */
  async function undo(ref: UserRef, before: User, changes: UserChanges, patch: PatchMarks): Promise<boolean> {
    let keepMobile = false;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const user = await deps.users.findUser(ref);
      if (!user || user.status === 'DELETED') return true; // a DELETED user keeps no group from being deleted
      const reversal = reversalOf(user, before, changes, { keepMobile });
      if (Object.keys(reversal).length === 0) return true; // a later patch changed every field again
      const liveAt = new Date(now().getTime() + CLOCK_MARGIN_MS);
      // Past this, a deletion may have counted without the entries: writing old groups back is unsafe.
      if (liveAt >= patch.until) return false;
      try {
        const at = new Date(Math.max(now().getTime(), user.updatedAt.getTime() + 1));
        if (await deps.users.applyChanges(ref, user.updatedAt, reversal, at, { takeOff: { patch: patch.id, liveAt, owed: patch.owed } }))
          return true;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        keepMobile = true;
      }
    }
    return false;
  }

  /**
   * The patch is stored but its groups are gone or unknown: undo it, and when that fails, say
   * so (a 503 that does not pretend nothing happened, and an error log an operator can act on;
   * no user id in it).
   */
  async function undoOrReport(ref: UserRef, before: User, changes: UserChanges, patch: PatchMarks): Promise<void> {
    let undone = false;
    try {
      undone = await undo(ref, before, changes, patch);
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message }, 'PATCH undo failed; trying once more');
      undone = await undo(ref, before, changes, patch).catch(() => false);
    }
    if (undone) {
      await deps.users.takeOffGroupsLeaving(ref, patch.id, now()).catch(() => undefined); // else they lapse
      // An undo that found nothing to write back (the user deleted, or changed again) did not take
      // the entry off: the request fails, so it records nothing (left behind, the sweep writes it).
      await deps.users.settledOwedActivity(ref, [patch.owed]).catch(() => undefined);
      return;
    }
    deps.logger.error(
      { enterpriseId: ref.enterpriseId, groups: groupsSetBy(changes) },
      'a PATCH naming a group being deleted could not be undone: a user of this enterprise may name a removed group (GET /v1/users?group=)',
    );
    throw new UnavailableError(
      'Service unavailable: the change was stored but its group is being deleted and it could not be undone; read the user and PATCH it',
      {
        retryAfterSeconds: 1,
      },
    );
  }

  return {
    async update(caller: { clientId: string }, ref: UserRef, request: UserUpdateRequest): Promise<User> {
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        const user = await deps.users.findUser(ref);
        if (!user) throw new NotFoundError('User not found');
        if (user.status === 'DELETED') throw userExists(user);
        const changes = effectiveChanges(user, request.changes);
        await check(ref, user, changes);
        if (Object.keys(changes).length === 0) return user;
        // Strictly later than the read: two changes in one millisecond still tell apart.
        const at = new Date(Math.max(now().getTime(), user.updatedAt.getTime() + 1));
        // The groups an undo may write back stay counted by a deletion until the re-read below.
        const owed = owedActivityEntry('user.updated', { type: 'client', clientId: caller.clientId }, at, request.comments);
        const patch = { id: randomUUID(), until: new Date(at.getTime() + DELETION_MARKER_TTL_MS), owed: owed.id };
        const leaving: GroupLeaving[] = groupsUndoMayRestore(user, changes).map((group) => ({
          group,
          patch: patch.id,
          until: patch.until,
        }));
        let applied: boolean;
        try {
          applied = await deps.users.applyChanges(ref, user.updatedAt, changes, at, { add: leaving, owed });
        } catch (err) {
          if (isDuplicateKeyError(err)) throw mobileHeld();
          throw err;
        }
        if (!applied) continue;
        if (groupsSetBy(changes).length > 0) {
          // A group deletion may have counted its users between the check and the write: read the
          // groups again, and undo the patch if one is gone or being deleted (group-deletion.service.ts).
          let gone: string | undefined;
          try {
            [gone] = await deps.groups.findMissingGroupNames(ref.enterpriseId, groupsSetBy(changes));
          } catch (err) {
            await undoOrReport(ref, user, changes, patch); // the groups are unknown: the failed request leaves nothing
            throw err;
          }
          if (gone !== undefined) {
            await undoOrReport(ref, user, changes, patch);
            throw missingGroup(gone);
          }
        }
        if (leaving.length > 0) {
          // Best effort: entries left behind only make a deletion 409 until they lapse.
          await deps.users
            .takeOffGroupsLeaving(ref, patch.id, now())
            .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message }, 'PATCH group entries left to lapse'));
        }
        // The change is stored, and its entry with it: a record that cannot be written now must
        // not turn the answer into an error (a retry would change nothing, and so record nothing).
        // Only its own entry: another PATCH's may still be undone (its group re-read pending).
        await settleOwedActivity(deps, ref, [owed]).catch((err: unknown) =>
          deps.logger.warn(
            { err: (err as Error).message, enterpriseId: ref.enterpriseId },
            'PATCH stored; activity entry not written; the sweep writes it',
          ),
        );
        const updated: User = { ...user, updatedAt: at };
        for (const [field, value] of Object.entries(changes)) {
          if (value === null) delete (updated as unknown as Record<string, unknown>)[field];
          else (updated as unknown as Record<string, unknown>)[field] = value;
        }
        return updated;
      }
      throw new UnavailableError('Service unavailable: the user kept changing; retry later', { retryAfterSeconds: 1 });
    },
  };
}

export type UserUpdateService = ReturnType<typeof createUserUpdateService>;
