import { Router, type RequestHandler } from 'express';
import { requireUserToken, userAuthOf, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { AUTH_SERVER_PATH } from './auth-server.js';

export const USERINFO_PATH = `${AUTH_SERVER_PATH}/userinfo`;

/**
 * The UserInfo endpoint (OpenID Connect Core 5.3), GET or POST with the user's access token in
 * the Authorization header. It answers the claims of the `openid` scope, which are all we
 * publish: `sub`, the bare userId, and `enterprise_id`, its enterprise (as in the ID token). The
 * token must have been granted `openid`; profile data
 * stays at /v1/me for the `notifications` scope.
 */
export function userinfoRoutes(userTokens: UserTokenStores): Router {
  const router = Router();
  const answer: RequestHandler = (_req, res) => {
    const { user } = userAuthOf(res);
    res.json({ sub: user.userId, enterprise_id: user.enterpriseId });
  };
  router.get(USERINFO_PATH, requireUserToken(userTokens, 'openid'), answer);
  router.post(USERINFO_PATH, requireUserToken(userTokens, 'openid'), answer);
  return router;
}
