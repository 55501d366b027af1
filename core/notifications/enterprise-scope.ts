import type { Client } from '../clients/clients.repository.js';
import type { User } from '../users/user.types.js';

/*
 * The only places notifications learn which enterprise a client or user belongs to. Clients and
 * users carry `enterpriseId` once enterprises exist as tenants; until then everything is in the
 * single enterprise `default`.
 */

export const DEFAULT_ENTERPRISE = 'default';

/** The enterprise a client acts for. */
export function enterpriseOfClient(client: Pick<Client, 'clientId'> & { enterpriseId?: string }): string {
  return client.enterpriseId ?? DEFAULT_ENTERPRISE;
}

function enterpriseOfUser(user: User & { enterpriseId?: string }): string {
  return user.enterpriseId ?? DEFAULT_ENTERPRISE;
}

/** Whether the user is blocked (set by the admin block operation; absent means not blocked). */
export function isUserBlocked(user: User & { blocked?: boolean }): boolean {
  return user.blocked === true;
}

export interface UserFinder {
  findByUserId(userId: string): Promise<User | undefined>;
}

/** The user `userId` of this enterprise, whatever its status; undefined when it has none. */
export async function findEnterpriseUser(users: UserFinder, enterpriseId: string, userId: string): Promise<User | undefined> {
  const user = await users.findByUserId(userId);
  return user && enterpriseOfUser(user) === enterpriseId ? user : undefined;
}
