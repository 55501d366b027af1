import { Router } from 'express';
import { NotFoundError } from '../../core/errors/app-error.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { toUserResponse } from './user-response.js';

/** Blocking users (admin API): a blocked user cannot sign in and their user tokens are refused. */
export function adminUsersRoutes(ctx: ServiceContext): Router {
  const router = Router();
  const users = createUsersRepository(ctx.mongo);

  router.put('/admin/users/:userId/blocked', requireAdminToken(ctx), ...jsonBody(ctx), validateBody('admin-users.blocked.json'), async (req, res) => {
    const userId = String(req.params.userId);
    const { blocked, reason } = req.body as { blocked: boolean; reason?: string };
    if (!(await users.setBlocked(userId, blocked, reason, new Date()))) throw new NotFoundError('User not found');
    const user = await users.findByUserId(userId);
    if (!user) throw new NotFoundError('User not found');
    res.json(toUserResponse(user));
  });

  return router;
}
