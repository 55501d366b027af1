import { Router } from 'express';
import { requireUserToken, userAuthOf, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { toUserResponse } from './user-response.js';

/** The signed-in user's own routes (user tokens only). */
export function meRoutes(userTokens: UserTokenStores): Router {
  const router = Router();
  const userToken = requireUserToken(userTokens, 'notifications');

  router.get('/v1/me', userToken, (_req, res) => {
    res.json(toUserResponse(userAuthOf(res).user));
  });

  return router;
}
