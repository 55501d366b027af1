import { createActivityRepository } from '../core/activity/activity.repository.js';
import { createDeliveriesRepository } from '../core/deliveries/deliveries.repository.js';
import { createDeliveryReplay, type DeliveryReplay } from '../core/deliveries/delivery-replay.js';
import { otpStillWanted } from '../core/otp/otp-replay-check.js';
import { createOtpsRepository } from '../core/otp/otps.repository.js';
import { requeueDispatch } from '../core/platform/queues/dispatch.queue.js';
import { activationStillWanted } from '../core/users/activation-replay-check.js';
import { createUsersRepository } from '../core/users/users.repository.js';
import type { ServiceContext } from './service-context.js';

/** Wires the operators' replay of failed deliveries: each kind's owner says whether its message is still wanted. */
export function createDeliveryReplayServices(ctx: ServiceContext): DeliveryReplay {
  const otpCheck = otpStillWanted(createOtpsRepository(ctx.mongo));
  return createDeliveryReplay({
    deliveries: createDeliveriesRepository(ctx.mongo),
    stillWanted: { otp: otpCheck, login: otpCheck, activation: activationStillWanted(createUsersRepository(ctx.mongo)) },
    enqueue: (deliveryId) => requeueDispatch(ctx.queues.dispatch, deliveryId),
    activity: createActivityRepository(ctx.mongo),
    logger: ctx.logger.child({ component: 'delivery-replay' }),
  });
}
