import { Router } from 'express';
import type { ActivationThrottle } from '../../core/users/activation-throttle.js';
import type { UserLifecycle } from '../../core/users/user-lifecycle.service.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { enterpriseQuery } from './enterprise-query.js';
import { toUserResponse } from './user-response.js';

/**
 * Blocking users (admin API): a blocked user cannot sign in, their pending notifications end
 * DISCARD, and their access tokens, refresh tokens and browser sessions end for good (unblocking
 * restores none of them: the user signs in again). The
 * user is named by `?enterpriseId=` (default `default`) and userId; every change is in the activity record.
 */
export interface AdminUsersRouteServices {
  lifecycle: Pick<UserLifecycle, 'setBlocked'>;
  throttle: Pick<ActivationThrottle, 'attemptsLeft'>;
}

export function adminUsersRoutes(ctx: ServiceContext, services: AdminUsersRouteServices): Router {
  const router = Router();

  router.put(
    '/admin/users/:userId/blocked',
    requireAdminToken(ctx),
    ...jsonBody(ctx),
    validateBody('admin-users.blocked.json'),
    async (req, res) => {
      const ref = { enterpriseId: enterpriseQuery(req), userId: String(req.params.userId) };
      const { blocked, reason } = req.body as { blocked: boolean; reason?: string };
      const user = await services.lifecycle.setBlocked(ref, blocked, reason);
      res.json(toUserResponse(user, user.activation ? await services.throttle.attemptsLeft(ref) : undefined));
    },
  );

  return router;
}
