import { Router } from 'express';
import type { PushSubscriptionInput, PushSubscriptionRecord } from '../../core/push/push-subscription.types.js';
import type { PushSubscriptionsService } from '../../core/push/push-subscriptions.service.js';
import type { VapidKeys } from '../../core/push/vapid-keys.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { requireUserToken, userAuthOf, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';

export const PUSH_SUBSCRIPTIONS_PATH = '/v1/me/push-subscriptions';
export const PUSH_KEY_PATH = '/v1/me/push-key';

/** A subscription as its user sees it: never its keys. */
function toResponse(s: PushSubscriptionRecord): Record<string, unknown> {
  return {
    subscription_id: s.subscriptionId,
    endpoint: s.endpoint,
    ...(s.expiresAt ? { expiration_time: s.expiresAt.toISOString() } : {}),
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/** The signed-in user's Web Push subscriptions (a user token with the notifications scope). */
export function mePushSubscriptionsRoutes(
  ctx: ServiceContext,
  service: PushSubscriptionsService,
  vapidKeys: () => Promise<VapidKeys>,
  userTokens: UserTokenStores,
): Router {
  const router = Router();
  const user = requireUserToken(userTokens, 'notifications');
  const ownerOf = (res: Parameters<typeof userAuthOf>[0]) => {
    const { enterpriseId, userId } = userAuthOf(res).user;
    return { enterpriseId, userId };
  };

  router.get(PUSH_KEY_PATH, user, async (_req, res) => {
    res.json({ applicationServerKey: (await vapidKeys()).publicKey });
  });

  router.get(PUSH_SUBSCRIPTIONS_PATH, user, async (_req, res) => {
    res.json({ subscriptions: (await service.list(ownerOf(res))).map(toResponse) });
  });

  router.post(PUSH_SUBSCRIPTIONS_PATH, user, ...jsonBody(ctx), validateBody('push-subscriptions.register.json'), async (req, res) => {
    const { record, created } = await service.register(ownerOf(res), req.body as PushSubscriptionInput);
    if (created) res.status(201).location(`${PUSH_SUBSCRIPTIONS_PATH}/${record.subscriptionId}`);
    res.json(toResponse(record));
  });

  router.delete(`${PUSH_SUBSCRIPTIONS_PATH}/:subscriptionId`, user, async (req, res) => {
    await service.remove(ownerOf(res), String(req.params.subscriptionId));
    res.status(204).end();
  });

  return router;
}
