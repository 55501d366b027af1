import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { User } from '../users/user.types.js';

/*
 * How notifications learn whom a client or user belongs to: clients and users carry their
 * enterpriseId, and users are looked up by (enterpriseId, userId) only.
 */

/** Whether an admin has blocked the user (no sign-in, no new notifications). */
export function isUserBlocked(user: Pick<User, 'blocked'>): boolean {
  return user.blocked !== undefined;
}

export interface UserFinder {
  findUser(ref: UserRef): Promise<User | undefined>;
}
