import type { Logger } from '../platform/logger/logger.js';
import { createChannelSubscriber } from '../platform/queues/channel-subscriber.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';

/**
 * "These notifications reached a final state", told to every API process through Redis pub/sub,
 * so that an enterprise waiting on one process (`GET /v1/notifications/{uuid}?wait=`) hears of an
 * answer given through another. Pub/sub delivers at most once (nothing is kept for a subscriber
 * that is reconnecting, nor across a Redis failover): it makes waiting fast, never correct on its
 * own. Waiters therefore also read the record again on a timer, and expiry needs no message at
 * all (a reader sees an ACTIVE record past its `expiresAt` as EXPIRED).
 */
export interface NotificationEndEvents {
  /** Tells every process; never throws (a lost message costs a waiter one poll interval). */
  publish(notificationUuids: readonly string[]): Promise<void>;
  /** Calls `onEnded` when `notificationUuid` is said to have ended; returns the unsubscribe. */
  listen(notificationUuid: string, onEnded: () => void): () => void;
  /** Resolves once this process's subscription is in place (the first listener starts it). */
  ready(): Promise<void>;
  /** Listeners in this process now. */
  listeners(): number;
  close(): void;
}

export function createNotificationEndEvents(deps: {
  /** The process's command connection: publishes. */
  redis: RedisClient;
  /** Opens the one subscriber connection of this process, on first use. */
  openSubscriber: () => RedisClient;
  /** The deployment's channel (its queue prefix), so two deployments on one Redis stay apart. */
  channel: string;
  logger: Logger;
}): NotificationEndEvents {
  const byUuid = new Map<string, Set<() => void>>();
  let count = 0;
  const subscription = createChannelSubscriber({
    openSubscriber: deps.openSubscriber,
    channel: deps.channel,
    label: 'notification events',
    logger: deps.logger,
    onMessage: (message) => {
      for (const uuid of message.split(',')) for (const listener of byUuid.get(uuid) ?? []) listener();
    },
  });
  // Waiters still poll when the subscription fails; the next listener tries again.
  const subscribe = (): Promise<void> => subscription.ready().catch(() => undefined);

  return {
    async publish(notificationUuids) {
      if (notificationUuids.length === 0) return;
      try {
        await deps.redis.publish(deps.channel, notificationUuids.join(','));
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'notification events: publish failed (waiters fall back to polling)');
      }
    },

    listen(notificationUuid, onEnded) {
      void subscribe();
      const set = byUuid.get(notificationUuid) ?? new Set<() => void>();
      byUuid.set(notificationUuid, set);
      set.add(onEnded);
      count += 1;
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        count -= 1;
        set.delete(onEnded);
        if (set.size === 0) byUuid.delete(notificationUuid);
      };
    },

    ready: subscribe,

    listeners: () => count,

    close() {
      subscription.close();
      byUuid.clear();
      count = 0;
    },
  };
}
