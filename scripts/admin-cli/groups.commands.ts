import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { createGroup } from '../../core/groups/group-creation.js';
import type { Group } from '../../core/groups/groups.repository.js';
import { deleteGroup } from '../../core/users/group-deletion.service.js';
import { checkAgainstSchema, required, type Command } from './cli-support.js';

const groupJson = (g: Group) => ({ name: g.name, description: g.description, createdAt: g.createdAt.toISOString() });

export const groupCommands: Record<string, Command> = {
  'groups create': async ({ services, arg, options }) => {
    const input = { name: required(arg, 'group name'), ...(options.description ? { description: options.description } : {}) };
    checkAgainstSchema('admin-groups.create.json', input);
    return groupJson(await createGroup(services, input));
  },
  'groups list': async ({ services }) => (await services.groups.listGroups()).map(groupJson),
  'groups show': async ({ services, arg }) => {
    const group = await services.groups.findGroup(required(arg, 'group name'));
    if (!group) throw new NotFoundError('Group not found');
    return groupJson(group);
  },
  'groups delete': async ({ services, arg }) => {
    const name = required(arg, 'group name');
    await deleteGroup(services, name);
    return { deleted: name };
  },
};
