import type { ActivityRepository } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { SignInFailuresRepository } from './sign-in-failures.repository.js';

export interface SignInUnlockDeps {
  users: Pick<UsersRepository, 'findUser'>;
  failures: Pick<SignInFailuresRepository, 'clear'>;
  activity: Pick<ActivityRepository, 'append'>;
}

/**
 * Admin (API or CLI): ends a sign-in lock and starts the user's count of wrong codes over;
 * recorded with the admin's comments when there was a lock to end (the count and the lock go in
 * one atomic delete, which tells). 404 for a user that does not exist in that enterprise.
 */
export async function unlockSignIn(deps: SignInUnlockDeps, ref: UserRef, comments?: string): Promise<{ wasLocked: boolean }> {
  if (!(await deps.users.findUser(ref))) throw new NotFoundError('User not found');
  const wasLocked = await deps.failures.clear(ref);
  if (wasLocked) await deps.activity.append({ actor: { type: 'admin' }, action: 'user.sign-in-unlocked', ...ref, comments });
  return { wasLocked };
}
