import { Router } from 'express';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { requireUserToken, userAuthOf } from '../middleware/user-token-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { toUserResponse } from './user-response.js';

/** The signed-in user's own routes (user tokens only). */
export function meRoutes(ctx: ServiceContext, users: Pick<UsersRepository, 'findUser'>): Router {
  const router = Router();
  const userToken = requireUserToken(ctx, users, 'notifications');

  router.get('/v1/me', userToken, (_req, res) => {
    res.json(toUserResponse(userAuthOf(res).user));
  });

  return router;
}
