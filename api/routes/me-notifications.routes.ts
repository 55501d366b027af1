import { Router } from 'express';
import { parseHistoryOptions, parseListOptions } from '../../core/notifications/list-options.parser.js';
import { isUserBlockedError } from '../../core/notifications/notification-errors.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import { actionRequiresNumber } from '../../core/notifications/number-match.js';
import type { AnswerInput, NotificationsService } from '../../core/notifications/notifications.service.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { requireUserToken, userAuthOf, userBlockedRefusal, type UserTokenStores } from '../middleware/user-token-auth.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { sendJsonList } from './json-list-answer.js';
import { notificationStreamHandler } from './me-notification-stream.js';
import { notificationUuidParam } from './notifications.routes.js';

/** A pending notification as GetNotifications returns it (plus what the app needs to answer). */
function toActiveResponse(n: Notification): Record<string, unknown> {
  return {
    notification_uuid: n.notificationUuid,
    ds_required: n.dsRequired,
    number_match: n.number !== undefined,
    // Each action says whether answering with it needs the number, so the app asks only then.
    actions: n.actions.map((a, index) => ({ ...a, requiresNumber: n.number !== undefined && actionRequiresNumber(n.actions, index) })),
    body: n.body,
    created_at: n.createdAt.toISOString(),
    expires_at: n.expiresAt.toISOString(),
  };
}

/** A history record as GetNotificationHistory returns it (the fields the client library documents). */
function toHistoryResponse(n: Notification): Record<string, unknown> {
  return {
    notification_uuid: n.notificationUuid,
    status: n.status,
    signing_status: n.signingStatus,
    is_ds_verified: n.isDsVerified,
    actions: n.actions,
    body: n.body,
    ...(n.action !== undefined ? { action: n.action } : {}),
    ...(n.deviceId !== undefined ? { device_id: n.deviceId } : {}),
    created_at: n.createdAt.toISOString(),
    ...(n.answeredAt ? { answered_at: n.answeredAt.toISOString() } : {}),
  };
}

/** A user blocked after the token check is refused as the token check refuses them: one body for one refusal. */
function asTokenRefusal(err: unknown): never {
  throw isUserBlockedError(err) ? userBlockedRefusal() : err;
}

const success = (notificationUuid: string, isDsVerified: boolean) => ({
  status_code: 100,
  message: 'Success',
  notification_uuid: notificationUuid,
  is_ds_verified: isDsVerified,
});

/** The client library's operations for the signed-in user; their refusals carry `code` (api/app.ts). */
export function meNotificationsRoutes(ctx: ServiceContext, service: NotificationsService, userTokens: UserTokenStores): Router {
  const router = Router();
  const user = requireUserToken(userTokens, 'notifications');

  router.get('/v1/me/notifications', user, async (req, res) => {
    const { enterpriseId, userId } = userAuthOf(res).user;
    const list = await service.listActive(enterpriseId, userId, parseListOptions(req.query));
    await sendJsonList(req, res, ctx.logger, 'notifications', list, toActiveResponse);
  });

  router.get('/v1/me/notifications/stream', user, notificationStreamHandler(ctx, userTokens));

  router.get('/v1/me/notifications/history', user, async (req, res) => {
    const { enterpriseId, userId } = userAuthOf(res).user;
    const list = await service.history(enterpriseId, userId, parseHistoryOptions(req.query));
    await sendJsonList(req, res, ctx.logger, 'history', list, toHistoryResponse);
  });

  router.post('/v1/me/notifications/:uuid/action', user, ...jsonBody(ctx), validateBody('notifications.answer.json'), async (req, res) => {
    const { enterpriseId, userId } = userAuthOf(res).user;
    const answered = await service
      .answer(enterpriseId, userId, notificationUuidParam(String(req.params.uuid)), req.body as AnswerInput)
      .catch(asTokenRefusal);
    res.json(success(answered.notificationUuid, answered.isDsVerified));
  });

  router.post('/v1/me/notifications/:uuid/dismiss', user, async (req, res) => {
    const { enterpriseId, userId } = userAuthOf(res).user;
    const dismissed = await service.dismiss(enterpriseId, userId, notificationUuidParam(String(req.params.uuid)));
    res.json(success(dismissed.notificationUuid, dismissed.isDsVerified));
  });

  return router;
}
