import { createDeliveriesRepository } from '../core/deliveries/deliveries.repository.js';
import { otpKeysFromConfig } from '../core/crypto/otp-keys.js';
import { enqueueEnrollment } from '../core/platform/queues/enrollment.queue.js';
import { createSignInFailuresRepository } from '../core/sign-in/sign-in-failures.repository.js';
import { createActivationDeliveries } from '../core/users/activation-deliveries.service.js';
import { createActivityRepository } from '../core/activity/activity.repository.js';
import { createActivationThrottle } from '../core/users/activation-throttle.js';
import { createActivationService } from '../core/users/activation.service.js';
import { createEnrollmentService, groupsFromConnection } from '../core/users/enrollment.service.js';
import { createFaceAnalyzerClient } from '../core/users/face-analyzer.client.js';
import { createUserUpdateService } from '../core/users/user-update.service.js';
import { createUsersRepository } from '../core/users/users.repository.js';
import type { UsersRouteServices } from './routes/users.routes.js';
import type { ServiceContext } from './service-context.js';

/** Wires enrollment and activation to this process's stores, keys, queues and analyzer. */
export function createUsersServices(ctx: ServiceContext): Omit<UsersRouteServices, 'discardPendingNotifications'> {
  const keys = otpKeysFromConfig(ctx.config);
  const users = createUsersRepository(ctx.mongo);
  const throttle = createActivationThrottle(ctx.redis, ctx.config.queuePrefix, ctx.config.activation);
  const activity = createActivityRepository(ctx.mongo);
  const enrollment = createEnrollmentService({
    users,
    groups: groupsFromConnection(ctx.mongo),
    enqueueEnrollment: (data) => enqueueEnrollment(ctx.queues.enrollment, data),
    activationDeliveries: createActivationDeliveries({
      users,
      deliveries: createDeliveriesRepository(ctx.mongo),
      enqueueDispatch: (id) => ctx.dispatch.enqueue(id),
      keys,
      activationAppUrl: ctx.config.activationAppUrl,
      logger: ctx.logger,
    }),
    activity,
    faceAnalyzer: ctx.config.faceAnalyzer ? createFaceAnalyzerClient(ctx.config.faceAnalyzer, ctx.logger) : undefined,
    keys,
    codeTtlSeconds: ctx.config.activation.codeTtlSeconds,
    logger: ctx.logger,
  });
  return {
    users,
    update: createUserUpdateService({ users, groups: groupsFromConnection(ctx.mongo), activity }),
    throttle,
    enrollment,
    activation: createActivationService({
      users,
      throttle,
      queueActivation: enrollment.queueActivation,
      activity,
      signInFailures: createSignInFailuresRepository(ctx.mongo),
      keys,
      codeTtlSeconds: ctx.config.activation.codeTtlSeconds,
      failureFloorMs: ctx.config.activation.failureFloorMs,
    }),
    activity,
  };
}
