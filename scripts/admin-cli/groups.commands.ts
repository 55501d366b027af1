import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { ENTERPRISE_ID_RE } from '../../core/platform/tenancy/enterprise-id.js';
import { createGroup } from '../../core/groups/group-creation.js';
import type { Group } from '../../core/groups/groups.repository.js';
import { deleteGroup } from '../../core/users/group-deletion.service.js';
import { checkAgainstSchema, required, UsageError, type CliOptions, type Command } from './cli-support.js';

const groupJson = (g: Group) => ({
  name: g.name,
  description: g.description,
  ...(g.enterpriseId === undefined ? {} : { enterpriseId: g.enterpriseId }),
  createdAt: g.createdAt.toISOString(),
});

/** The group's owner: `--enterprise` for an enterprise's own, none for the shared one (as `?enterpriseId=`). */
function ownerOption(options: CliOptions): string | undefined {
  const owner = options.enterprise;
  if (owner !== undefined && !ENTERPRISE_ID_RE.test(owner)) throw new UsageError(`--enterprise ${owner}: not an enterprise id`);
  return owner;
}

export const groupCommands: Record<string, Command> = {
  'groups create': async ({ services, arg, options }) => {
    const owner = ownerOption(options);
    const input = {
      name: required(arg, 'group name'),
      ...(options.description ? { description: options.description } : {}),
      ...(owner === undefined ? {} : { enterpriseId: owner }),
    };
    checkAgainstSchema('admin-groups.create.json', input);
    return groupJson(await createGroup(services, input));
  },
  'groups list': async ({ services, options }) => (await services.groups.listGroups(ownerOption(options))).map(groupJson),
  'groups show': async ({ services, arg, options }) => {
    const group = await services.groups.findGroup(required(arg, 'group name'), ownerOption(options));
    if (!group) throw new NotFoundError('Group not found');
    return groupJson(group);
  },
  'groups delete': async ({ services, arg, options }) => {
    const name = required(arg, 'group name');
    const owner = ownerOption(options);
    await deleteGroup(services, name, owner);
    return { deleted: name, ...(owner === undefined ? {} : { enterpriseId: owner }) };
  },
};
