import express, { type Express } from 'express';
import { AUTH_SERVER_PATH } from './auth-server/auth-server.js';
import { authServerRoutes, TOKEN_ENDPOINT_PATH } from './auth-server/auth-server.routes.js';
import { callerAddressOf } from './caller-address.js';
import { composeApi, type ApiServices } from './composition-root.js';
import { notFoundHandler } from './middleware/error-handler.js';
import { answerError, clientLibraryErrors, errorHandler } from './errors/error-pipeline.js';
import type { EdgeStep } from './middleware/edge-step.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { methodNotAllowed } from './middleware/method-not-allowed.middleware.js';
import { requestLogging } from './middleware/request-logging.js';
import { securityHeaders } from './middleware/security-headers.middleware.js';
import { userRoutesCors } from './middleware/user-routes-cors.middleware.js';
import { adminActivityRoutes } from './routes/admin-activity.routes.js';
import { adminClientsRoutes } from './routes/admin-clients.routes.js';
import { adminDeliveriesRoutes } from './routes/admin-deliveries.routes.js';
import { adminDeliveryReplayPageRoutes } from './routes/admin-delivery-replay-page.routes.js';
import { adminGroupsRoutes } from './routes/admin-groups.routes.js';
import { adminOutboxRoutes } from './routes/admin-outbox.routes.js';
import { adminQueuesRoutes, QUEUES_DASHBOARD_PATH } from './routes/admin-queues.routes.js';
import { adminTemplatesRoutes } from './routes/admin-templates.routes.js';
import { adminSignInLockRoutes } from './routes/admin-sign-in-lock.routes.js';
import { adminSigningKeysRoutes } from './routes/admin-signing-keys.routes.js';
import { adminPasskeysRoutes } from './routes/admin-passkeys.routes.js';
import { adminUsersRoutes } from './routes/admin-users.routes.js';
import { demoApproverRoutes } from './routes/demo-approver.routes.js';
import { DOCS_PATH, docsRoutes } from './routes/docs.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { homeRoutes } from './routes/home.routes.js';
import { meRoutes } from './routes/me.routes.js';
import { mePasskeysRoutes } from './routes/me-passkeys.routes.js';
import { meNotificationsRoutes } from './routes/me-notifications.routes.js';
import { mePushSubscriptionsRoutes } from './routes/me-push-subscriptions.routes.js';
import { notificationsRoutes } from './routes/notifications.routes.js';
import { otpRoutes } from './routes/otp.routes.js';
import { usersRoutes } from './routes/users.routes.js';
import { USER_API_PATH } from './routes/user-api-path.js';
import { webhookRoutes } from './routes/webhooks.routes.js';
import { routeDocs } from './openapi/route-docs.js';
import type { ServiceContext } from './service-context.js';
import { serveTokenRequestsFirst } from './token-lane.js';

/**
 * Builds the Express app; listening is main.ts's job so tests can run it on port 0. `services`
 * are those of the composition root; a test passes them in to reach the same instances.
 */
export function buildApp(ctx: ServiceContext, services: ApiServices = composeApi(ctx)): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', ctx.config.trustProxy);
  app.set('query parser', 'simple');

  // Every answer's first steps; the token lane runs the same ones.
  const firstSteps: EdgeStep[] = [
    securityHeaders(ctx, { docs: DOCS_PATH, dashboard: QUEUES_DASHBOARD_PATH, authServer: AUTH_SERVER_PATH }),
    requestLogging(ctx.logger),
    httpMetrics(ctx.metrics, routeDocs),
  ];
  for (const step of firstSteps) app.use(step);
  app.use(userRoutesCors(services.clientLookup));
  app.use(methodNotAllowed(ctx, services.bearer, routeDocs));
  const { repositories, notifications, bearer, userTokens } = services;
  // The busiest routes first: Express tries every router in order, and OTP requests (and token
  // requests the lane does not take) do not walk past the pages, docs and admin routers (none of
  // them shares a path with these).
  const authServer = authServerRoutes(ctx, services.signIn, services.authServer, userTokens, callerAddressOf(app));
  app.use(authServer.router);
  app.use(otpRoutes(ctx, bearer, services.otp, services.limits));
  app.use(homeRoutes(ctx));
  app.use(healthRoutes(ctx));
  app.use(docsRoutes(ctx));
  app.use(demoApproverRoutes(ctx));
  app.use(adminClientsRoutes(ctx, services.clients, services.idempotent));
  app.use(adminGroupsRoutes(ctx, repositories, services.idempotent));
  app.use(adminTemplatesRoutes(ctx, services.templates, services.idempotent));
  app.use(adminOutboxRoutes(ctx, repositories.outbox));
  app.use(adminQueuesRoutes(ctx));
  app.use(adminActivityRoutes(ctx, repositories.activity));
  app.use(adminDeliveriesRoutes(ctx, services.deliveryReplay));
  app.use(adminDeliveryReplayPageRoutes(ctx, services.deliveryReplay));
  app.use(webhookRoutes(ctx, repositories.webhookEvents, services.deliveryReceipts));
  app.use(usersRoutes(ctx, bearer, services.users, services.limits));
  app.use(adminUsersRoutes(ctx, { lifecycle: services.userLifecycle, throttle: services.users.throttle }));
  app.use(adminSignInLockRoutes(ctx, repositories));
  app.use(adminSigningKeysRoutes(ctx, services.signingKeyRotation, services.idempotent));
  app.use(adminPasskeysRoutes(ctx, repositories));
  app.use(meRoutes(userTokens));
  app.use(mePasskeysRoutes(ctx, repositories, userTokens));
  app.use(notificationsRoutes(ctx, bearer, notifications, services.idempotent, services.limits));
  app.use(meNotificationsRoutes(ctx, notifications, userTokens));
  app.use(mePushSubscriptionsRoutes(ctx, services.push.subscriptions, services.push.vapidKeys, userTokens));

  app.use(notFoundHandler());
  // Every refusal of the user API carries the client library's `code`, whichever step raised it:
  // its CORS, the 405 answer, a route, or no route at all (a path under /v1/me that does not exist).
  app.use(USER_API_PATH, clientLibraryErrors(ctx.logger));
  app.use(errorHandler(ctx.logger));
  serveTokenRequestsFirst(app, {
    path: TOKEN_ENDPOINT_PATH,
    steps: firstSteps,
    serve: authServer.serveTokenRequest,
    fail: answerError(ctx.logger),
  });
  return app;
}
