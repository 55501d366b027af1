import type { Locale } from '../platform/locales/shipped-locales.js';
import { ENTERPRISE_ID_RE, userKey, type UserRef } from '../platform/tenancy/enterprise-id.js';
import type { User } from '../users/user.types.js';
import { USER_ID_RE } from '../users/user-id.js';
import type { UsersRepository } from '../users/users.repository.js';

/** The client a user signs in to, as the sign-in code needs it. */
export interface SignInClient {
  clientId: string;
  name: string;
  /** The enterprise whose users sign in to this client. */
  enterpriseId: string;
  /** The language of this sign-in's pages, which its login code messages use too; English when absent. */
  locale?: Locale;
}

/**
 * The one look-up of a user for sign-in and for user tokens (login page, ID and refresh tokens,
 * /v1/me): a user of the enterprise of the client being signed in to, never of another.
 */
export function findUserForSignIn(
  users: Pick<UsersRepository, 'findUser'>,
  client: Pick<SignInClient, 'enterpriseId'>,
  userId: string,
): Promise<User | undefined> {
  return users.findUser({ enterpriseId: client.enterpriseId, userId });
}

/** Key of the per-user sign-in limits: the same userId in two enterprises is two people. */
export const signInUserKey = (client: Pick<SignInClient, 'enterpriseId'>, userId: string): string =>
  userKey({ enterpriseId: client.enterpriseId, userId });

/**
 * The authorization server's account id: the user with their enterprise, `<enterpriseId>:<userId>`,
 * so a browser session, grant or token never stands for the same userId in another enterprise.
 * Tokens still name the user by the bare userId (`sub`); the enterprise is the client's.
 */
export const accountIdOf = (ref: UserRef): string => userKey(ref);

/** The user an account id names, or undefined for anything else (ids written before the pair existed). */
export function userOfAccountId(accountId: string): UserRef | undefined {
  const colon = accountId.indexOf(':');
  if (colon <= 0) return undefined;
  const enterpriseId = accountId.slice(0, colon);
  const userId = accountId.slice(colon + 1);
  if (!ENTERPRISE_ID_RE.test(enterpriseId) || !USER_ID_RE.test(userId)) return undefined;
  return { enterpriseId, userId };
}
