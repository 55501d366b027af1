import type { GroupsRepository } from '../groups/groups.repository.js';
import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
import type { UsersRepository } from './users.repository.js';

/**
 * Deletes a group that no live user names (DELETED users keep their history). A group in use
 * stays: users would otherwise refer to a group that no longer exists and fail enrollment's rules
 * on their next update.
 */
export async function deleteGroup(
  deps: { groups: Pick<GroupsRepository, 'findGroup' | 'removeGroup'>; users: Pick<UsersRepository, 'countLiveInGroup'> },
  name: string,
): Promise<void> {
  if (!(await deps.groups.findGroup(name))) throw new NotFoundError('Group not found');
  const inUse = await deps.users.countLiveInGroup(name);
  if (inUse > 0) throw new ConflictError(`Group ${name} is in use by ${inUse} user${inUse === 1 ? '' : 's'}`);
  if (!(await deps.groups.removeGroup(name))) throw new NotFoundError('Group not found');
}
