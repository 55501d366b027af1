import type { Logger } from '../platform/logger/logger.js';
import { createChannelSubscriber } from '../platform/queues/channel-subscriber.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';

/** What a user's event stream says: a new notification, or one of theirs reaching a final state. */
export interface UserNotificationEvent {
  type: 'created' | 'ended';
  notification_uuid: string;
  status: string;
  /** For `created`: when it expires (no event is sent for expiry; the app drops it then). */
  expires_at?: string;
}

export interface UserEventsListener {
  /** Events with ids after `lastEventId` are sent first (resumption), then each new one once. */
  lastEventId?: string;
  send: (id: string, event: UserNotificationEvent) => void;
}

/**
 * The events of each user's notifications, for open streams on every API process. Each event is
 * appended to the user's Redis stream (bounded, kept a day), which gives it its id and lets a
 * reconnecting client ask for what it missed (`Last-Event-ID`); then it is published on one
 * channel that every API process listens to with one connection, and handed to the streams that
 * process holds for that user.
 */
export interface NotificationUserEvents {
  publish(enterpriseId: string, userId: string, event: UserNotificationEvent): Promise<void>;
  /** Starts sending to `listener`; resolves with the function that stops it. */
  open(enterpriseId: string, userId: string, listener: UserEventsListener): Promise<() => void>;
  /** Open streams in this process. */
  streams(): number;
  close(): void;
}

/** Events kept per user for resumption: a client away longer than that reloads its list. */
export const USER_EVENTS_KEPT = 100;
const USER_EVENTS_TTL_SECONDS = 24 * 3600;
const STREAM_ID_RE = /^([0-9]{1,20})-([0-9]{1,20})$/;

/** Redis stream ids compare as (milliseconds, sequence). */
export function compareStreamIds(a: string, b: string): number {
  const [, am = '0', as = '0'] = STREAM_ID_RE.exec(a) ?? [];
  const [, bm = '0', bs = '0'] = STREAM_ID_RE.exec(b) ?? [];
  const byMs = BigInt(am) - BigInt(bm);
  if (byMs !== 0n) return byMs < 0n ? -1 : 1;
  const bySeq = BigInt(as) - BigInt(bs);
  return bySeq === 0n ? 0 : bySeq < 0n ? -1 : 1;
}

export const isStreamId = (value: string): boolean => STREAM_ID_RE.test(value);

export function createNotificationUserEvents(deps: {
  redis: RedisClient;
  openSubscriber: () => RedisClient;
  /** The deployment's prefix: keys `<prefix>:user-events:<enterprise>:<user>` and one channel. */
  prefix: string;
  logger: Logger;
}): NotificationUserEvents {
  const channel = `${deps.prefix}:user-events`;
  const keyOf = (enterpriseId: string, userId: string) =>
    `${deps.prefix}:user-events:${encodeURIComponent(enterpriseId)}:${encodeURIComponent(userId)}`;
  const byKey = new Map<string, Set<(id: string, event: UserNotificationEvent) => void>>();
  let count = 0;
  const subscription = createChannelSubscriber({
    openSubscriber: deps.openSubscriber,
    channel,
    label: 'user events',
    logger: deps.logger,
    onMessage: (message) => {
      try {
        const { key, id, event } = JSON.parse(message) as { key: string; id: string; event: UserNotificationEvent };
        for (const deliver of byKey.get(key) ?? []) deliver(id, event);
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'user events: unreadable message ignored');
      }
    },
  });

  return {
    async publish(enterpriseId, userId, event) {
      const key = keyOf(enterpriseId, userId);
      try {
        const id = await deps.redis.xadd(key, 'MAXLEN', '~', String(USER_EVENTS_KEPT), '*', 'event', JSON.stringify(event));
        await deps.redis.expire(key, USER_EVENTS_TTL_SECONDS);
        if (id) await deps.redis.publish(channel, JSON.stringify({ key, id, event }));
      } catch (err) {
        // The change itself is stored in MongoDB; an app that missed the event sees it on its next list.
        deps.logger.warn({ err: (err as Error).message, type: event.type }, 'user events: not published');
      }
    },

    async open(enterpriseId, userId, listener) {
      const key = keyOf(enterpriseId, userId);
      // Live events wait here until what was missed has been sent, then go out in id order, once.
      let replaying = true;
      let lastSent = listener.lastEventId;
      const held: [string, UserNotificationEvent][] = [];
      const sendOnce = (id: string, event: UserNotificationEvent) => {
        if (lastSent !== undefined && compareStreamIds(id, lastSent) <= 0) return;
        lastSent = id;
        listener.send(id, event);
      };
      const deliver = (id: string, event: UserNotificationEvent) => {
        if (replaying) held.push([id, event]);
        else sendOnce(id, event);
      };
      const set = byKey.get(key) ?? new Set();
      byKey.set(key, set);
      set.add(deliver);
      count += 1;
      const stop = () => {
        if (!set.delete(deliver)) return;
        count -= 1;
        if (set.size === 0) byKey.delete(key);
      };
      try {
        await subscription.ready();
        if (listener.lastEventId !== undefined) {
          const missed = await deps.redis.xrange(key, `(${listener.lastEventId}`, '+');
          for (const [id, fields] of missed) {
            const json = fields[fields.indexOf('event') + 1];
            if (json) sendOnce(id, JSON.parse(json) as UserNotificationEvent);
          }
        }
      } catch (err) {
        stop();
        throw err;
      }
      replaying = false;
      held.sort(([a], [b]) => compareStreamIds(a, b));
      for (const [id, event] of held.splice(0)) sendOnce(id, event);
      return stop;
    },

    streams: () => count,

    close() {
      subscription.close();
      byKey.clear();
      count = 0;
    },
  };
}
