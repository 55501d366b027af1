import type { ActivityRepository } from '../activity/activity.repository.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { owedActivityEntry, settleOwedActivity } from './owed-activity.js';
import type { User } from './user.types.js';
import type { UsersRepository } from './users.repository.js';

export interface UserLifecycleDeps {
  users: Pick<
    UsersRepository,
    'setBlocked' | 'endPendingActivation' | 'findUser' | 'markDeleted' | 'findOwedActivity' | 'settledOwedActivity'
  >;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /** Ends the user's pending notifications as DISCARD. */
  discardPendingNotifications: (ref: UserRef) => Promise<number>;
  /** Ends the user's access tokens, refresh tokens and browser sessions (on a block and on a deletion). */
  endSignIns: (ref: UserRef) => Promise<void>;
  /** Cancels the user's pending OTPs and login codes, so their waiting messages are not sent. */
  cancelPendingOtps: (ref: UserRef) => Promise<void>;
  /** Where an entry left to the sweep is told (enterprise only: no user id, no reason). */
  logger: Pick<Logger, 'warn'>;
}

/**
 * Blocking and deleting a user, with everything each ends. The status is stored before what it
 * ends is ended, so nothing new can be created afterwards (sign-in, token refresh, OTPs and
 * notifications check it); doing it again finishes what a crash interrupted. Pending OTPs and
 * login codes are cancelled: an OTP whose request read the user just before the status was
 * stored and wrote its record just after the cancel is the one left, in those milliseconds. Passkeys and push
 * subscriptions stay: a blocked or deleted user's sign-ins and tokens are refused, so they are
 * never used.
 *
 * Pending notifications are discarded before the status is stored as well as after. An answer
 * checks its user, then writes: one that checked just before the status was stored may write
 * just after it, and then finds the notification already ended by the first discard (the
 * answer's write and the discard are conditional updates of the same record, so exactly one
 * wins). The second discard ends what was created in between.
 *
 * The activity entry a change owes is stored on the user in the change's own write, and written
 * to the record last (owed-activity.ts): ending sign-ins does not wait on the record, and an entry
 * missed by a failure or a crash is written by the next call for the user or by the enrollment
 * worker's sweep, once, with the change's time. So a record that cannot be written at that moment
 * does not fail the call: the change and what it ended are done, and an error would only invite a
 * retry that has nothing left to do.
 */
export function createUserLifecycle(deps: UserLifecycleDeps) {
  const settleOrLeaveToSweep = (ref: UserRef, action: string) =>
    settleOwedActivity(deps, ref).catch((err: unknown) => {
      deps.logger.warn(
        { err: (err as Error).message, enterpriseId: ref.enterpriseId },
        `${action}: change stored; activity entry not written; the sweep writes it`,
      );
    });
  return {
    /**
     * Admin (API or CLI): blocks or unblocks the user, recorded with the reason and the time of
     * the change when it changed something (a block for another reason does). Blocking, even
     * again, ends the user's pending activation code, pending notifications, pending OTPs and
     * sign-ins; unblocking restores none of them (an admin re-issues an activation code).
     * NotFoundError for a user that does not exist in that enterprise.
     */
    async setBlocked(ref: UserRef, blocked: boolean, reason?: string): Promise<User> {
      const at = new Date();
      if (blocked) await deps.discardPendingNotifications(ref);
      // Only a change owes an entry (a second block for the same reason, an unblock of a user who
      // is not blocked do not), but a repeated block still ends what follows and writes what an
      // earlier call left owed: it finishes a block a crash interrupted.
      const owed = owedActivityEntry(blocked ? 'user.blocked' : 'user.unblocked', { type: 'admin' }, at, reason);
      const outcome = await deps.users.setBlocked(ref, blocked, reason, at, owed);
      if (!outcome) throw new NotFoundError('User not found');
      if (blocked) {
        // An activation racing this is refused by the block already stored (its write requires
        // an unblocked user); this ends the code itself, so unblocking does not bring it back.
        await deps.users.endPendingActivation(ref, at);
        await deps.discardPendingNotifications(ref);
        await deps.cancelPendingOtps(ref);
        await deps.endSignIns(ref);
      }
      await settleOrLeaveToSweep(ref, blocked ? 'user.blocked' : 'user.unblocked');
      const user = await deps.users.findUser(ref);
      if (!user) throw new NotFoundError('User not found');
      return user;
    },

    /**
     * DELETE by a client of the user's enterprise: the user's pending notifications end DISCARD,
     * the user is DELETED (recorded with the caller's comments when it changed something), then
     * any created meanwhile end DISCARD too, and the user's sign-ins end as a block ends them.
     * The API already refuses a DELETED user's tokens, but introspection does not ask about the
     * user: without this, a client's backend would be told a deleted user's tokens are active.
     * Deleting again (the user is already DELETED) finishes what a crash interrupted.
     * NotFoundError when the enterprise has no such user.
     */
    async remove(caller: { clientId: string }, ref: UserRef, comments?: string): Promise<void> {
      await deps.discardPendingNotifications(ref);
      const at = new Date();
      const owed = owedActivityEntry('user.deleted', { type: 'client', clientId: caller.clientId }, at, comments);
      // Only a deletion owes an entry; deleting again writes what an earlier one left owed.
      const outcome = await deps.users.markDeleted(ref, at, owed);
      if (!outcome) throw new NotFoundError('User not found');
      await deps.discardPendingNotifications(ref);
      await deps.cancelPendingOtps(ref);
      await deps.endSignIns(ref);
      await settleOrLeaveToSweep(ref, 'user.deleted');
    },
  };
}

export type UserLifecycle = ReturnType<typeof createUserLifecycle>;
