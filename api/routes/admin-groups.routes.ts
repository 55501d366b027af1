import { Router } from 'express';
import type { ActivityRepository } from '../../core/activity/activity.repository.js';
import { createGroup } from '../../core/groups/group-creation.js';
import { listGroupPage } from '../../core/groups/group-list.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import type { Group, GroupsRepository } from '../../core/groups/groups.repository.js';
import { deleteGroup } from '../../core/users/group-deletion.service.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { linkNextPage, parseAdminListPage } from './admin-list-page.js';
import { optionalEnterpriseQuery } from './enterprise-query.js';
import { ADMIN_CALLER, idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';

const toGroupResponse = (group: Group) => ({
  name: group.name,
  description: group.description,
  ...(group.enterpriseId === undefined ? {} : { enterpriseId: group.enterpriseId }),
  createdAt: group.createdAt.toISOString(),
});

export function adminGroupsRoutes(
  ctx: ServiceContext,
  repositories: { groups: GroupsRepository; users: UsersRepository; activity: ActivityRepository },
  idempotent: IdempotentRequests,
): Router {
  const { groups } = repositories;
  // A change's activity entry left to the sweep is logged.
  const stores = { ...repositories, logger: ctx.logger };
  const router = Router();
  const admin = requireAdminToken(ctx);

  // A group is named by its name and owner: `?enterpriseId=` for an enterprise's own, none for the
  // shared one. The list shows every group, shared and owned (as the templates' list), or with
  // `?enterpriseId=` that enterprise's own.

  // With an Idempotency-Key a retry of a creation that was done gets its 201 again, not 409 "exists"
  // (the caller could not tell its own success from someone else's group). The key is kept in the
  // group's enterprise (a shared group's: the default enterprise's).
  router.post('/admin/groups', admin, ...jsonBody(ctx), validateBody('admin-groups.create.json'), async (req, res) => {
    const input = req.body as { name: string; description?: string; enterpriseId?: string };
    const scope = { enterpriseId: input.enterpriseId ?? DEFAULT_ENTERPRISE_ID, callerId: ADMIN_CALLER, route: 'POST /admin/groups' };
    const answer = await idempotent.run({ scope, key: idempotencyKeyOf(req), request: req.body }, async (claim) => {
      const created = await createGroup(stores, input, claim);
      // The group's address names its owner, as GET /admin/groups/{name} reads it.
      const owner = created.enterpriseId === undefined ? '' : `?enterpriseId=${encodeURIComponent(created.enterpriseId)}`;
      return { status: 201, location: `/admin/groups/${encodeURIComponent(created.name)}${owner}`, body: toGroupResponse(created) };
    });
    sendIdempotentAnswer(res, answer);
  });

  router.get('/admin/groups', admin, async (req, res) => {
    const page = parseAdminListPage(req);
    const owner = optionalEnterpriseQuery(req);
    const { entries, next } = await listGroupPage(groups, owner, page);
    linkNextPage(res, '/admin/groups', page.limit, next, owner === undefined ? {} : { enterpriseId: owner });
    res.json(entries.map(toGroupResponse));
  });

  router.get('/admin/groups/:name', admin, async (req, res) => {
    const name = req.params.name as string;
    const group = await groups.findGroup(name, optionalEnterpriseQuery(req));
    if (!group) throw new NotFoundError('Group not found');
    res.json(toGroupResponse(group));
  });

  router.delete('/admin/groups/:name', admin, async (req, res) => {
    await deleteGroup(stores, req.params.name as string, optionalEnterpriseQuery(req));
    res.status(204).end();
  });

  return router;
}
