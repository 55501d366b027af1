import { Router, type Request } from 'express';
import { USER_ID_RE } from '../../core/users/user-id.js';
import type { ActivityEntry, ActivityRepository } from '../../core/activity/activity.repository.js';
import { ENTERPRISE_ID_RE } from '../../core/platform/tenancy/enterprise-id.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';

const CURSOR_RE = /^[0-9a-f]{24}$/;
export const ACTIVITY_PAGE_DEFAULT = 50;
export const ACTIVITY_PAGE_MAX = 500;

/** One optional query parameter, checked against `re`; 422 naming it otherwise. */
function param(req: Request, name: string, re: RegExp): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !re.test(value)) throw new ValidationError(`[Invalid field ${name}]`, { error: 'Invalid data.' });
  return value;
}

const toResponse = (entry: ActivityEntry) => ({
  id: entry.id,
  at: entry.at.toISOString(),
  actor: entry.actor,
  action: entry.action,
  ...(entry.enterpriseId !== undefined ? { enterpriseId: entry.enterpriseId } : {}),
  ...(entry.userId !== undefined ? { userId: entry.userId } : {}),
  ...(entry.clientId !== undefined ? { clientId: entry.clientId } : {}),
  ...(entry.templateName !== undefined ? { templateName: entry.templateName } : {}),
  ...(entry.groupName !== undefined ? { groupName: entry.groupName } : {}),
  ...(entry.replay !== undefined ? { replay: entry.replay } : {}),
  ...(entry.deliveryIds !== undefined ? { deliveryIds: entry.deliveryIds } : {}),
  ...(entry.signingKeys !== undefined ? { signingKeys: entry.signingKeys } : {}),
  ...(entry.comments !== undefined ? { comments: entry.comments } : {}),
});

/** The activity record (admin activity report): newest first, filtered, a page at a time. */
export function adminActivityRoutes(ctx: ServiceContext, activity: Pick<ActivityRepository, 'list'>): Router {
  const router = Router();

  router.get('/admin/activity', requireAdminToken(ctx), async (req, res) => {
    const limitText = param(req, 'limit', /^[0-9]{1,4}$/);
    const limit = limitText === undefined ? ACTIVITY_PAGE_DEFAULT : Number(limitText);
    if (limit < 1 || limit > ACTIVITY_PAGE_MAX) throw new ValidationError('[Invalid field limit]', { error: 'Invalid data.' });
    const enterpriseId = param(req, 'enterpriseId', ENTERPRISE_ID_RE);
    const page = await activity.list({
      ...(enterpriseId !== undefined ? { scope: { enterpriseId } } : {}),
      userId: param(req, 'userId', USER_ID_RE),
      before: param(req, 'before', CURSOR_RE),
      limit,
    });
    res.json({ activity: page.entries.map(toResponse), ...(page.next ? { next: page.next } : {}) });
  });

  return router;
}
