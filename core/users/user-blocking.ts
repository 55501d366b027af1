import type { ActivityRepository } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { User } from './user.types.js';
import type { UsersRepository } from './users.repository.js';

export interface UserBlockingDeps {
  users: Pick<UsersRepository, 'setBlocked' | 'findUser'>;
  activity: Pick<ActivityRepository, 'append'>;
  /** Ends the user's pending notifications as DISCARD. */
  discardPendingNotifications: (enterpriseId: string, userId: string) => Promise<number>;
  /** Ends the user's access tokens, refresh tokens and browser sessions. */
  endSignIns: (ref: UserRef) => Promise<void>;
}

/**
 * Admin (API or CLI): blocks or unblocks a user, recorded with the reason. Blocking ends what
 * the user holds after the block is stored, so nothing new can be created in between (sign-in
 * and refresh check the block); blocking again finishes what a crash interrupted. Unblocking
 * restores none of it. NotFoundError for a user that does not exist in that enterprise.
 */
export async function setUserBlocked(deps: UserBlockingDeps, ref: UserRef, blocked: boolean, reason?: string): Promise<User> {
  if (!(await deps.users.setBlocked(ref, blocked, reason, new Date()))) throw new NotFoundError('User not found');
  await deps.activity.append({ actor: { type: 'admin' }, action: blocked ? 'user.blocked' : 'user.unblocked', ...ref, comments: reason });
  if (blocked) {
    await deps.discardPendingNotifications(ref.enterpriseId, ref.userId);
    await deps.endSignIns(ref);
  }
  const user = await deps.users.findUser(ref);
  if (!user) throw new NotFoundError('User not found');
  return user;
}
