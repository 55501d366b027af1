import type { User } from '../users/user.types.js';
import type { UsersRepository } from '../users/users.repository.js';

/** The client a user signs in to, as the sign-in code needs it. */
export interface SignInClient {
  clientId: string;
  name: string;
}

/**
 * The one look-up of a user for sign-in and for user tokens (login page, ID and refresh tokens,
 * /v1/me). Users belong to the enterprise of the client being signed in to, so scoping users
 * per enterprise changes this function only.
 */
export function findUserForSignIn(users: Pick<UsersRepository, 'findByUserId'>, client: SignInClient, userId: string): Promise<User | undefined> {
  void client;
  return users.findByUserId(userId);
}

/** Who may receive a login code: known, not DELETED, not blocked (others get no message). */
export function canReceiveLoginCode(user: User | undefined): user is User {
  return user !== undefined && user.status !== 'DELETED' && !user.blocked;
}

/** Who may finish a sign-in and use user tokens: ACTIVE and not blocked. */
export function canSignIn(user: User | undefined): boolean {
  return user !== undefined && user.status === 'ACTIVE' && !user.blocked;
}
