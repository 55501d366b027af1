import { Router } from 'express';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { createEnterpriseShares } from '../../core/notifications/enterprise-shares.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import type { CreateNotificationInput, NotificationsService } from '../../core/notifications/notifications.service.js';
import { authOf, requireBearer, type BearerStores } from '../middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import { isDraining } from '../draining-state.js';
import type { ServiceContext } from '../service-context.js';
import { parseWaitSeconds, waitForFinalState } from './notification-wait.js';
import { idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';
import type { EnterpriseApiLimits } from '../../core/platform/throttling/enterprise-api-limits.js';
import { rateLimitHeaders } from '../errors/rate-limit-headers.js';
import { refundable, takePersonBudgets } from './request-budgets.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Undefined for a notification that does not exist; any other failure goes on. */
function unlessNotFound(err: unknown): undefined {
  if (err instanceof NotFoundError) return undefined;
  throw err;
}

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
    // With a callbackUrl: whether the callback went out (FAILED also when its address was refused).
    ...(n.callbackState ? { callback_status: n.callbackState } : {}),
  };
}

/** Enterprise API of notifications (scope notifications): create; read and cancel only the calling client's own. */
export function notificationsRoutes(
  ctx: ServiceContext,
  bearer: BearerStores,
  service: NotificationsService,
  idempotent: IdempotentRequests,
  limits: EnterpriseApiLimits,
): Router {
  const router = Router();
  // This process's waiting requests (`?wait=`), shared between enterprises.
  const waits = createEnterpriseShares({
    capacity: ctx.config.notifications.waitsPerProcess,
    sharePercent: ctx.config.notifications.waitsEnterpriseSharePercent,
  });
  const guard = [requireBearer(ctx, bearer, 'notifications'), requireAllowedIp(bearer.clients)];

  // With an Idempotency-Key, the notification's uuid is the claim's: a retry of a request that died
  // after storing it answers that notification instead of pushing a second one to the person.
  // Each new notification takes a point of the client's budget and of the person's across the
  // enterprise's clients (push fatigue: no one is asked again and again until they accept by
  // mistake); a replay, or a retry finishing a stored one, takes none.
  router.post('/v1/notifications', ...guard, ...jsonBody(ctx), validateBody('notifications.create.json'), async (req, res) => {
    const { clientId, enterpriseId, test } = authOf(res);
    const owner = { clientId, enterpriseId };
    const input = req.body as CreateNotificationInput;
    // Field rules first (422), then budgets (429), then the user (404): the documented order.
    service.checkRequest(input);
    const scope = { enterpriseId, callerId: clientId, route: 'POST /v1/notifications' };
    const answer = await idempotent.run({ scope, key: idempotencyKeyOf(req), request: req.body }, async (claim) => {
      const found = claim?.resumed ? await service.read(owner, claim.id).catch(unlessNotFound) : undefined;
      const created = found ?? (await createWithinBudgets(input, { clientId, enterpriseId, test }, claim?.id));
      return {
        status: 201,
        location: `/v1/notifications/${created.notificationUuid}`,
        body: { notification_uuid: created.notificationUuid, ...(created.number !== undefined ? { number: created.number } : {}) },
      };
    });
    sendIdempotentAnswer(res, answer);

    async function createWithinBudgets(
      body: CreateNotificationInput,
      caller: { clientId: string; enterpriseId: string; test: boolean },
      notificationUuid: string | undefined,
    ) {
      const budgets = takePersonBudgets(limits, 'notifications', { ...caller, userId: body.userId });
      try {
        res.set(rateLimitHeaders(await budgets.admission));
        return await service.create(owner, body, { notificationUuid });
      } catch (err) {
        // Refused for the caller's own mistake (an unknown user, a bad field): nothing reached the person.
        if (refundable(err)) await budgets.refund();
        throw err;
      }
    }
  });

  router.get('/v1/notifications/:uuid', ...guard, async (req, res) => {
    const { clientId, enterpriseId } = authOf(res);
    const uuid = notificationUuidParam(String(req.params.uuid));
    const seconds = parseWaitSeconds(req.query.wait);
    const notification = await waitForFinalState({
      read: () => service.read({ clientId, enterpriseId }, uuid),
      events: ctx.notificationEnds,
      uuid,
      seconds,
      res,
      isDraining: () => isDraining(req.app),
      shares: waits,
      enterpriseId,
    });
    // undefined: the client went away while waiting; there is no one to answer.
    if (notification) res.json(toNotificationResponse(notification));
  });

  router.post('/v1/notifications/:uuid/cancel', ...guard, async (req, res) => {
    const { clientId, enterpriseId } = authOf(res);
    res.json(toNotificationResponse(await service.cancel({ clientId, enterpriseId }, notificationUuidParam(String(req.params.uuid)))));
  });

  return router;
}
