import express, { type Express } from 'express';
import { createDeliveriesRepository } from '../core/deliveries/deliveries.repository.js';
import { deliveryFailoverOn } from '../core/otp/otp-failover.js';
import { otpKeysFromConfig } from '../core/crypto/otp-keys.js';
import { createOtpsRepository } from '../core/otp/otps.repository.js';
import { enqueueDispatch } from '../core/platform/queues/dispatch.queue.js';
import { createSentJournal } from '../core/deliveries/sent-journal.js';
import { recordDeliveryReceipt } from '../core/providers/delivery-receipts.service.js';
import { AUTH_SERVER_PATH } from './auth-server/auth-server.js';
import { authServerRoutes } from './auth-server/auth-server.routes.js';
import { notFoundHandler } from './middleware/error-handler.js';
import { errorHandler } from './errors/error-pipeline.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { methodNotAllowed } from './middleware/method-not-allowed.middleware.js';
import { requestLogging } from './middleware/request-logging.js';
import { securityHeaders } from './middleware/security-headers.middleware.js';
import { userRoutesCors } from './middleware/user-routes-cors.middleware.js';
import { createOtpServices } from './otp-services.factory.js';
import { adminActivityRoutes } from './routes/admin-activity.routes.js';
import { adminClientsRoutes } from './routes/admin-clients.routes.js';
import { adminDeliveriesRoutes } from './routes/admin-deliveries.routes.js';
import { adminDeliveryReplayPageRoutes } from './routes/admin-delivery-replay-page.routes.js';
import { createDeliveryReplayServices } from './delivery-replay-services.factory.js';
import { adminGroupsRoutes } from './routes/admin-groups.routes.js';
import { adminOutboxRoutes } from './routes/admin-outbox.routes.js';
import { adminQueuesRoutes, QUEUES_DASHBOARD_PATH } from './routes/admin-queues.routes.js';
import { adminTemplatesRoutes } from './routes/admin-templates.routes.js';
import { adminSignInLockRoutes } from './routes/admin-sign-in-lock.routes.js';
import { adminPasskeysRoutes } from './routes/admin-passkeys.routes.js';
import { adminUsersRoutes } from './routes/admin-users.routes.js';
import { demoApproverRoutes } from './routes/demo-approver.routes.js';
import { DOCS_PATH, docsRoutes } from './routes/docs.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { homeRoutes } from './routes/home.routes.js';
import { meRoutes } from './routes/me.routes.js';
import { mePasskeysRoutes } from './routes/me-passkeys.routes.js';
import { createNotificationsServices } from './notifications-services.factory.js';
import { meNotificationsRoutes } from './routes/me-notifications.routes.js';
import { mePushSubscriptionsRoutes } from './routes/me-push-subscriptions.routes.js';
import { createPushServices } from './push-services.factory.js';
import { notificationsRoutes } from './routes/notifications.routes.js';
import { otpRoutes } from './routes/otp.routes.js';
import { usersRoutes } from './routes/users.routes.js';
import { webhookRoutes } from './routes/webhooks.routes.js';
import { routeDocs } from './openapi/route-docs.js';
import type { ServiceContext } from './service-context.js';
import { createSignInServices } from './sign-in-services.factory.js';
import { createUsersServices } from './users-services.factory.js';

/** Builds the Express app; listening is main.ts's job so tests can run it on port 0. */
export function buildApp(ctx: ServiceContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', ctx.config.trustProxy);
  app.set('query parser', 'simple');

  app.use(securityHeaders(ctx, { docs: DOCS_PATH, dashboard: QUEUES_DASHBOARD_PATH, authServer: AUTH_SERVER_PATH }));
  app.use(requestLogging(ctx.logger));
  app.use(httpMetrics(ctx.metrics, routeDocs));
  app.use(userRoutesCors(ctx));
  app.use(methodNotAllowed(ctx, routeDocs));
  app.use(homeRoutes(ctx));
  app.use(healthRoutes(ctx));
  app.use(docsRoutes(ctx));
  app.use(demoApproverRoutes(ctx));
  const otpServices = createOtpServices(ctx);
  app.use(authServerRoutes(ctx, createSignInServices(ctx, otpServices)));
  app.use(adminClientsRoutes(ctx));
  app.use(adminGroupsRoutes(ctx));
  app.use(adminTemplatesRoutes(ctx));
  app.use(adminOutboxRoutes(ctx));
  app.use(adminQueuesRoutes(ctx));
  app.use(adminActivityRoutes(ctx));
  const deliveryReplay = createDeliveryReplayServices(ctx);
  app.use(adminDeliveriesRoutes(ctx, deliveryReplay));
  app.use(adminDeliveryReplayPageRoutes(ctx, deliveryReplay));
  const deliveries = createDeliveriesRepository(ctx.mongo);
  const failover = deliveryFailoverOn(
    { deliveries, otps: createOtpsRepository(ctx.mongo) },
    ctx.config,
    otpKeysFromConfig(ctx.config).encryptionKey,
    (deliveryId) => enqueueDispatch(ctx.queues.dispatch, deliveryId),
    ctx.logger,
  );
  app.use(
    webhookRoutes(ctx, recordDeliveryReceipt(deliveries, createSentJournal(ctx.redis, ctx.config.queuePrefix), ctx.logger, failover)),
  );
  app.use(otpRoutes(ctx, otpServices));
  const { notifications, users } = createNotificationsServices(ctx);
  app.use(
    usersRoutes(ctx, {
      ...createUsersServices(ctx),
      discardPendingNotifications: (enterpriseId, userId) => notifications.discardPendingNotifications(enterpriseId, userId),
    }),
  );
  app.use(
    adminUsersRoutes(ctx, {
      discardPendingNotifications: (enterpriseId, userId) => notifications.discardPendingNotifications(enterpriseId, userId),
    }),
  );
  app.use(adminSignInLockRoutes(ctx));
  app.use(adminPasskeysRoutes(ctx));
  app.use(meRoutes(ctx));
  app.use(mePasskeysRoutes(ctx));
  app.use(notificationsRoutes(ctx, notifications));
  app.use(meNotificationsRoutes(ctx, notifications, users, ctx.logger));
  const push = createPushServices(ctx);
  app.use(mePushSubscriptionsRoutes(ctx, push.subscriptions, push.vapidKeys, users, ctx.logger));

  app.use(notFoundHandler());
  app.use(errorHandler(ctx.logger));
  return app;
}
