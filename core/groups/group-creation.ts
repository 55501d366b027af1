import type { ActivityRepository } from '../activity/activity.repository.js';
import type { Group, GroupsRepository } from './groups.repository.js';

/**
 * Creates a group (409 when the name exists) and records it in the activity record, as every
 * other admin change is: who made the group an enrollment may name, and when.
 */
export async function createGroup(
  deps: { groups: Pick<GroupsRepository, 'createGroup'>; activity: Pick<ActivityRepository, 'append'> },
  input: { name: string; description?: string },
): Promise<Group> {
  const group = await deps.groups.createGroup(input);
  await deps.activity.append({ actor: { type: 'admin' }, action: 'group.created', groupName: group.name });
  return group;
}
