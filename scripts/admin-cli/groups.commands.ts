import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { createGroupsRepository, type Group } from '../../core/groups/groups.repository.js';
import { deleteGroup } from '../../core/users/group-deletion.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { checkAgainstSchema, required, type Command } from './cli-support.js';

const groupJson = (g: Group) => ({ name: g.name, description: g.description, createdAt: g.createdAt.toISOString() });

export const groupCommands: Record<string, Command> = {
  'groups create': async ({ mongo, arg, options }) => {
    const input = { name: required(arg, 'group name'), ...(options.description ? { description: options.description } : {}) };
    checkAgainstSchema('admin-groups.create.json', input);
    return groupJson(await createGroupsRepository(mongo).createGroup(input));
  },
  'groups list': async ({ mongo }) => (await createGroupsRepository(mongo).listGroups()).map(groupJson),
  'groups show': async ({ mongo, arg }) => {
    const group = await createGroupsRepository(mongo).findGroup(required(arg, 'group name'));
    if (!group) throw new NotFoundError('Group not found');
    return groupJson(group);
  },
  'groups delete': async ({ mongo, arg }) => {
    const name = required(arg, 'group name');
    await deleteGroup({ groups: createGroupsRepository(mongo), users: createUsersRepository(mongo) }, name);
    return { deleted: name };
  },
};
