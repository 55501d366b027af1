import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { User } from './user.types.js';

/*
 * "Can this user be reached": the one rule for every path that sends a user something (OTPs,
 * login codes, notifications) and for every path that lets a user in (sign-in, user tokens).
 * A user who fails it is answered as not found, so a blocked or deleted user looks like none.
 */

/** Finds a user by enterprise and userId only (the users repository's look-up). */
export interface UserFinder {
  findUser(ref: UserRef): Promise<User | undefined>;
}

/** Whether an admin has blocked the user (no sign-in, no new messages or notifications). */
export function isUserBlocked(user: Pick<User, 'blocked'>): boolean {
  return Boolean(user.blocked);
}

/**
 * Who may be sent OTPs, login codes and notifications: known, not DELETED, not blocked (pending
 * users too). Callers answer false as "not found", so the guard's false branch is never relied on.
 */
export function isReachable(user: User | undefined): user is User {
  return user !== undefined && user.status !== 'DELETED' && !isUserBlocked(user);
}

/** Who may finish a sign-in and use user tokens: ACTIVE and not blocked (no type guard: false says nothing of existence). */
export function canSignIn(user: User | undefined): boolean {
  return user !== undefined && user.status === 'ACTIVE' && !isUserBlocked(user);
}
