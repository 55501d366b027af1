import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { UsersRepository } from '../users/users.repository.js';
import { endSignInLock, type SignInLockEndDeps } from './sign-in-lock-activity.js';

export interface SignInUnlockDeps extends SignInLockEndDeps {
  users: SignInLockEndDeps['users'] & Pick<UsersRepository, 'findUser'>;
}

/**
 * Admin (API or CLI): ends a sign-in lock and starts the user's count of wrong codes over;
 * recorded with the admin's comments when there was a lock to end, exactly once
 * (sign-in-lock-activity.ts). 404 for a user that does not exist in that enterprise.
 */
export async function unlockSignIn(deps: SignInUnlockDeps, ref: UserRef, comments?: string): Promise<{ wasLocked: boolean }> {
  if (!(await deps.users.findUser(ref))) throw new NotFoundError('User not found');
  return { wasLocked: await endSignInLock(deps, ref, { type: 'admin' }, comments) };
}
