import { Router } from 'express';
import type { ActivityRepository } from '../../core/activity/activity.repository.js';
import type { SignInFailuresRepository } from '../../core/sign-in/sign-in-failures.repository.js';
import { unlockSignIn } from '../../core/sign-in/sign-in-unlock.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { enterpriseQuery } from './enterprise-query.js';

/**
 * Unlocking sign-in (admin API): after too many wrong login codes in a row a user cannot sign in
 * until an admin removes the lock here (or the user activates again). The user is named by
 * `?enterpriseId=` (default `default`) and userId; `?comments=` goes to the activity record.
 */
export function adminSignInLockRoutes(
  ctx: ServiceContext,
  repositories: { users: UsersRepository; signInFailures: SignInFailuresRepository; activity: ActivityRepository },
): Router {
  const router = Router();
  const deps = { users: repositories.users, failures: repositories.signInFailures, activity: repositories.activity, logger: ctx.logger };

  router.delete('/admin/users/:userId/sign-in-lock', requireAdminToken(ctx), async (req, res) => {
    const ref = { enterpriseId: enterpriseQuery(req), userId: String(req.params.userId) };
    const comments = typeof req.query.comments === 'string' ? req.query.comments.slice(0, 1000) : undefined;
    await unlockSignIn(deps, ref, comments);
    res.status(204).end();
  });

  return router;
}
