import type { Logger } from '../platform/logger/logger.js';
import { pushSends } from '../platform/metrics/business-metrics.js';
import type { CallbackAddressPolicy } from '../notifications/callback-address-policy.js';
import { CallbackAddressRefusedError, type Resolver } from '../notifications/guarded-post.js';
import { effectiveStatus } from '../notifications/notification-states.js';
import type { NotificationsRepository } from '../notifications/notifications.repository.js';
import { decryptSecret } from '../crypto/secret-box.js';
import { classifyPushStatus, sendPush } from './push-sender.js';
import type { PushSubscriptionsRepository } from './push-subscriptions.repository.js';
import { authBoxContext } from './push-subscriptions.service.js';
import type { VapidKeys } from './vapid-keys.js';
import type { PushSendSlots } from './push-send-slots.js';

export interface PushDeliveryDeps {
  notifications: Pick<NotificationsRepository, 'find'>;
  subscriptions: PushSubscriptionsRepository;
  vapidKeys: () => Promise<VapidKeys>;
  vapidSubject: string;
  encryptionKey: Buffer;
  policy: CallbackAddressPolicy;
  timeoutMs: number;
  /** Queues one send job per subscription (idempotent by job id). */
  enqueueSends: (notificationUuid: string, subscriptionIds: string[]) => Promise<void>;
  logger: Logger;
  /** Only tests replace it. */
  resolver?: Resolver;
  now?: () => Date;
  /** This process's pushes in flight per user and per enterprise (push-send-slots.ts); none: no cap. */
  slots?: PushSendSlots;
}

/** The push service answered 429 or 5xx: BullMQ tries again with backoff. */
export class PushRetryError extends Error {
  constructor(readonly status: number) {
    super(`push service answered ${status}; will retry`);
    this.name = 'PushRetryError';
  }
}

export type FanoutOutcome = { outcome: 'queued'; subscriptions: number } | { outcome: 'ended' | 'missing' };
export type SendOutcome = 'sent' | 'gone' | 'rejected' | 'refused' | 'skipped';

/**
 * Web Push of new notifications. A push says only that something is waiting: the app fetches
 * the notification itself with the user's token, so nothing of it passes through push services.
 * Each send re-reads the notification (no push for one already ended) and the subscription, both
 * within the notification's enterprise and user.
 */
export function createPushDelivery(deps: PushDeliveryDeps) {
  const now = deps.now ?? (() => new Date());
  const log = deps.logger.child({ component: 'web-push' });

  async function activeNotification(notificationUuid: string) {
    const n = await deps.notifications.find(notificationUuid);
    if (!n) return null;
    return effectiveStatus(n, now()) === 'ACTIVE' ? n : undefined;
  }

  return {
    async fanout(notificationUuid: string): Promise<FanoutOutcome> {
      const n = await activeNotification(notificationUuid);
      if (n === null) return { outcome: 'missing' };
      if (!n) return { outcome: 'ended' };
      const subscriptions = await deps.subscriptions.list({ enterpriseId: n.enterpriseId, userId: n.userId });
      await deps.enqueueSends(
        notificationUuid,
        subscriptions.map((s) => s.subscriptionId),
      );
      return { outcome: 'queued', subscriptions: subscriptions.length };
    },

    async send(notificationUuid: string, subscriptionId: string): Promise<SendOutcome> {
      const n = await activeNotification(notificationUuid);
      if (!n) return count('skipped');
      const sub = await deps.subscriptions.find({ enterpriseId: n.enterpriseId, userId: n.userId }, subscriptionId);
      if (!sub) return count('skipped');
      const at = now();
      if (sub.expiresAt && sub.expiresAt.getTime() <= at.getTime()) {
        await deps.subscriptions.removeGone(sub.subscriptionId, sub.endpoint, sub.updatedAt);
        return count('gone');
      }
      // The push service keeps it no longer than the notification can still be answered.
      const ttlSeconds = Math.floor((n.expiresAt.getTime() - at.getTime()) / 1000);
      if (ttlSeconds < 1) return count('skipped');
      const where = { notificationUuid, subscriptionId, pushHost: new URL(sub.endpoint).host };
      // Throws PushSlotsBusyError when the user or the enterprise holds its share: no request then.
      const release = deps.slots?.take({ enterpriseId: n.enterpriseId, userId: n.userId });
      let status: number;
      try {
        status = await sendPush(
          {
            endpoint: sub.endpoint,
            p256dh: sub.p256dh,
            auth: decryptSecret(sub.authBox, deps.encryptionKey, authBoxContext(sub.subscriptionId)),
          },
          {
            vapid: await deps.vapidKeys(),
            vapidSubject: deps.vapidSubject,
            ttlSeconds,
            policy: deps.policy,
            timeoutMs: deps.timeoutMs,
            ...(deps.resolver ? { resolver: deps.resolver } : {}),
          },
        );
      } catch (err) {
        if (!(err instanceof CallbackAddressRefusedError)) {
          pushSends.inc({ outcome: 'retry' });
          throw err;
        }
        // Retrying cannot make an internal address public; the subscription stays (DNS may change).
        log.warn({ ...where, reason: err.reason }, 'push refused: the endpoint address is not allowed; not retried');
        return count('refused');
      } finally {
        release?.();
      }
      switch (classifyPushStatus(status)) {
        case 'accepted':
          return count('sent');
        case 'gone':
          await deps.subscriptions.removeGone(sub.subscriptionId, sub.endpoint, sub.updatedAt);
          log.info({ ...where, status }, 'push subscription gone; deleted');
          return count('gone');
        case 'retry':
          pushSends.inc({ outcome: 'retry' });
          throw new PushRetryError(status);
        case 'rejected':
          log.warn({ ...where, status }, 'push rejected by the push service; not retried');
          return count('rejected');
      }
    },

    /** The last attempt failed too. */
    gaveUp(): void {
      pushSends.inc({ outcome: 'failed' });
    },
  };
}

function count(outcome: SendOutcome): SendOutcome {
  pushSends.inc({ outcome });
  return outcome;
}

export type PushDelivery = ReturnType<typeof createPushDelivery>;
