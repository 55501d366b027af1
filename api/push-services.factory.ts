import { otpKeysFromConfig } from '../core/crypto/otp-keys.js';
import { createPushSubscriptionsRepository } from '../core/push/push-subscriptions.repository.js';
import { createPushSubscriptionsService, type PushSubscriptionsService } from '../core/push/push-subscriptions.service.js';
import { getVapidKeys, type VapidKeys } from '../core/push/vapid-keys.js';
import type { ServiceContext } from './service-context.js';

export interface PushServices {
  subscriptions: PushSubscriptionsService;
  vapidKeys: () => Promise<VapidKeys>;
}

/** Wires Web Push subscriptions and the VAPID key to this process's store and settings. */
export function createPushServices(ctx: ServiceContext): PushServices {
  const { encryptionKey } = otpKeysFromConfig(ctx.config);
  return {
    subscriptions: createPushSubscriptionsService({
      repository: createPushSubscriptionsRepository(ctx.mongo),
      encryptionKey,
      endpointPolicy: ctx.config.push.endpointAddresses,
      maxPerUser: ctx.config.push.subscriptionsPerUser,
    }),
    vapidKeys: () => getVapidKeys(ctx.mongo, ctx.config.push, encryptionKey),
  };
}
