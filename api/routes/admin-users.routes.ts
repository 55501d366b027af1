import { Router } from 'express';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { endOidcRecordsOfAccount } from '../../core/auth/oidc-records.repository.js';
import type { UserRef } from '../../core/platform/tenancy/enterprise-id.js';
import { accountIdOf } from '../../core/sign-in/sign-in-users.js';
import { createActivationThrottle } from '../../core/users/activation-throttle.js';
import { setUserBlocked } from '../../core/users/user-blocking.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
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
  /** Ends the user's pending notifications as DISCARD (blocking a user). */
  discardPendingNotifications: (enterpriseId: string, userId: string) => Promise<number>;
}

export function adminUsersRoutes(ctx: ServiceContext, services: AdminUsersRouteServices): Router {
  const router = Router();
  const blocking = {
    users: createUsersRepository(ctx.mongo),
    activity: createActivityRepository(ctx.mongo),
    discardPendingNotifications: services.discardPendingNotifications,
    endSignIns: (ref: UserRef) => endOidcRecordsOfAccount(ctx.mongo, accountIdOf(ref), new Date()),
  };
  const throttle = createActivationThrottle(ctx.redis, ctx.config.queuePrefix, ctx.config.activation);

  router.put(
    '/admin/users/:userId/blocked',
    requireAdminToken(ctx),
    ...jsonBody(ctx),
    validateBody('admin-users.blocked.json'),
    async (req, res) => {
      const ref = { enterpriseId: enterpriseQuery(req), userId: String(req.params.userId) };
      const { blocked, reason } = req.body as { blocked: boolean; reason?: string };
      const user = await setUserBlocked(blocking, ref, blocked, reason);
      res.json(toUserResponse(user, user.activation ? await throttle.attemptsLeft(ref) : undefined));
    },
  );

  return router;
}
