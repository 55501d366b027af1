import { Router } from 'express';
import { lookupClient } from '../../core/clients/client-lookup.cache.js';
import { NotFoundError } from '../../core/errors/app-error.js';
import { enterpriseOfClient } from '../../core/notifications/enterprise-scope.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import type { CreateNotificationInput, NotificationsService } from '../../core/notifications/notifications.service.js';
import { authOf, requireBearer } from '../middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function notificationUuidParam(value: string): string {
  if (!UUID_RE.test(value)) throw new NotFoundError('Notification not found');
  return value.toLowerCase();
}

/** The enterprise's view of a notification (schemas/http/notifications.notification.json). */
function toNotificationResponse(n: Notification): Record<string, unknown> {
  return {
    notification_uuid: n.notificationUuid,
    userId: n.userId,
    status: n.status,
    ...(n.action !== undefined ? { action: n.action } : {}),
    signing_status: n.signingStatus,
    is_ds_verified: n.isDsVerified,
    createdAt: n.createdAt.toISOString(),
    expiresAt: n.expiresAt.toISOString(),
    ...(n.answeredAt ? { answeredAt: n.answeredAt.toISOString() } : {}),
  };
}

/** Enterprise API of notifications (scope notifications): create, read, cancel, in the client's enterprise. */
export function notificationsRoutes(ctx: ServiceContext, service: NotificationsService): Router {
  const router = Router();
  const guard = [requireBearer(ctx, 'notifications'), requireAllowedIp(ctx)];

  /** The calling client and its enterprise (the client exists: the bearer check just read it). */
  async function caller(clientId: string): Promise<{ clientId: string; enterpriseId: string }> {
    const client = await lookupClient(ctx.mongo, clientId);
    if (!client) throw new Error('client vanished after authentication');
    return { clientId, enterpriseId: enterpriseOfClient(client) };
  }

  router.post('/v1/notifications', ...guard, ...jsonBody(ctx), validateBody('notifications.create.json'), async (req, res) => {
    const created = await service.create(await caller(authOf(res).clientId), req.body as CreateNotificationInput);
    res
      .status(201)
      .location(`/v1/notifications/${created.notificationUuid}`)
      .json({ notification_uuid: created.notificationUuid, ...(created.number !== undefined ? { number: created.number } : {}) });
  });

  router.get('/v1/notifications/:uuid', ...guard, async (req, res) => {
    const { enterpriseId } = await caller(authOf(res).clientId);
    res.json(toNotificationResponse(await service.read(enterpriseId, notificationUuidParam(String(req.params.uuid)))));
  });

  router.post('/v1/notifications/:uuid/cancel', ...guard, async (req, res) => {
    const { enterpriseId } = await caller(authOf(res).clientId);
    res.json(toNotificationResponse(await service.cancel(enterpriseId, notificationUuidParam(String(req.params.uuid)))));
  });

  return router;
}
