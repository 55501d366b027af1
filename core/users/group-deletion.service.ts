import type { Connection } from 'mongoose';
import { findGroup, removeGroup } from '../groups/groups.repository.js';
import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
import type { UsersRepository } from './users.repository.js';

/**
 * Deletes a group that no live user names (DELETED users keep their history). A group in use
 * stays: users would otherwise refer to a group that no longer exists and fail enrollment's rules
 * on their next update.
 */
export async function deleteGroup(connection: Connection, users: Pick<UsersRepository, 'countLiveInGroup'>, name: string): Promise<void> {
  if (!(await findGroup(connection, name))) throw new NotFoundError('Group not found');
  const inUse = await users.countLiveInGroup(name);
  if (inUse > 0) throw new ConflictError(`Group ${name} is in use by ${inUse} user${inUse === 1 ? '' : 's'}`);
  if (!(await removeGroup(connection, name))) throw new NotFoundError('Group not found');
}
