import type { Logger } from '../platform/logger/logger.js';
import { createChannelSubscriber } from '../platform/queues/channel-subscriber.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';
import { createUserEventReader, type UserEventReader, type UserNotificationEvent } from './user-event-reader.js';

export interface UserEventsListener {
  /** Events with ids after `lastEventId` are sent first (resumption), then each new one once. */
  lastEventId?: string;
  send: (id: string, event: UserNotificationEvent) => void;
}

/**
 * The events of each user's notifications, for open streams on every API process. Each event is
 * appended to the user's Redis stream (bounded, kept a day), which gives it its id and lets a
 * reconnecting client ask for what it missed (`Last-Event-ID`); then a message on one channel,
 * which every API process listens to with one connection, wakes the streams that process holds
 * for that user, and each reads the user's stream from the last event it sent. Every stream reads
 * again each time the subscription is made again, and a sweep wakes every stream now and then,
 * for messages lost otherwise (pub/sub delivers at most once).
 */
export interface NotificationUserEvents {
  /** Appends the event and wakes its user's streams; false when Redis did not take it (logged). */
  publish(enterpriseId: string, userId: string, event: UserNotificationEvent): Promise<boolean>;
  /** Starts sending to `listener`; resolves with the function that stops it. */
  open(enterpriseId: string, userId: string, listener: UserEventsListener): Promise<() => void>;
  /** Open streams in this process. */
  streams(): number;
  /** Open streams of one user in this process. */
  streamsOf(enterpriseId: string, userId: string): number;
  close(): void;
}

/** Events kept per user for resumption: a client away longer than that reloads its list. */
export const USER_EVENTS_KEPT = 100;
/** How long a user's stream is kept after its last event; an app away longer reloads its list. */
export const USER_EVENTS_TTL_SECONDS = 24 * 3600;
/** How often every open stream reads its user's events whether or not a message came. */
const USER_EVENTS_SWEEP_MS = 15_000;

/**
 * The Redis stream of one user's events: `<prefix>:user-events:{<enterprise>:<user>}`. The braces
 * make the user its hash tag, so on a Redis Cluster users' streams spread over every master; the
 * deployment's prefix loses its own braces here (they keep the queues' keys in one slot, and these
 * keys never meet those in a script). Both parts are URI-encoded, so no id can add braces or
 * colons of its own.
 */
export function userEventsKey(prefix: string, enterpriseId: string, userId: string): string {
  return `${prefix.replace(/[{}]/g, '')}:user-events:{${encodeURIComponent(enterpriseId)}:${encodeURIComponent(userId)}}`;
}

/** The one channel whose messages wake the open streams of every API process. */
const userEventsChannel = (prefix: string) => `${prefix}:user-events`;

/**
 * Appends one event to its user's Redis stream and says so on the channel that wakes open
 * streams; throws when Redis does not take it. Used by the API as the change is written and by
 * the notification worker for changes whose event the API never appended.
 */
export async function appendUserEvent(
  redis: RedisClient,
  prefix: string,
  enterpriseId: string,
  userId: string,
  event: UserNotificationEvent,
): Promise<void> {
  const key = userEventsKey(prefix, enterpriseId, userId);
  const id = await redis.xadd(key, 'MAXLEN', '~', String(USER_EVENTS_KEPT), '*', 'event', JSON.stringify(event));
  await redis.expire(key, USER_EVENTS_TTL_SECONDS);
  // The message also carries the event's id and content, which processes of older releases read.
  if (id) await redis.publish(userEventsChannel(prefix), JSON.stringify({ key, id, event }));
}

export function createNotificationUserEvents(deps: {
  redis: RedisClient;
  openSubscriber: () => RedisClient;
  /** The deployment's prefix: one key per user (`userEventsKey`) and the channel `<prefix>:user-events`. */
  prefix: string;
  logger: Logger;
  /** Overrides how often every open stream reads whether or not a message came. */
  sweepMs?: number;
}): NotificationUserEvents {
  const channel = userEventsChannel(deps.prefix);
  const sweepMs = deps.sweepMs ?? USER_EVENTS_SWEEP_MS;
  const keyOf = (enterpriseId: string, userId: string) => userEventsKey(deps.prefix, enterpriseId, userId);
  // The reader of each open stream, by the key of its user's events.
  const byKey = new Map<string, Set<UserEventReader>>();
  let count = 0;
  let sweep: NodeJS.Timeout | undefined;
  const wakeAll = () => {
    for (const readers of byKey.values()) for (const reader of readers) reader.wake();
  };
  const subscription = createChannelSubscriber({
    openSubscriber: deps.openSubscriber,
    channel,
    label: 'user events',
    // Each time the subscription is made again (a reconnect, a move to another cluster node) a
    // message may have gone by: every open stream reads now rather than at the next sweep.
    onSubscribed: wakeAll,
    logger: deps.logger,
    onMessage: (message) => {
      try {
        // The message also carries the event's id and content, which processes of older releases read.
        const { key } = JSON.parse(message) as { key: string };
        for (const reader of byKey.get(key) ?? []) reader.wake();
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'user events: unreadable message ignored');
      }
    },
  });
  // While Redis is down every open stream's read fails at each sweep, and every client's attempt to
  // open one fails: one warning per sweep period says how many.
  let failedReads = 0;
  let warnedAt = 0;
  const readFailed = (err: Error) => {
    failedReads += 1;
    if (Date.now() - warnedAt < sweepMs) return;
    deps.logger.warn({ err: err.message, failedReads }, 'user events: reads failed (the next wake-up reads again)');
    warnedAt = Date.now();
    failedReads = 0;
  };
  return {
    async publish(enterpriseId, userId, event) {
      try {
        await appendUserEvent(deps.redis, deps.prefix, enterpriseId, userId, event);
        return true;
      } catch (err) {
        // The change is stored in MongoDB with its event marked due: the notification worker appends it.
        deps.logger.warn({ err: (err as Error).message, type: event.type }, 'user events: not published');
        return false;
      }
    },

    async open(enterpriseId, userId, listener) {
      const key = keyOf(enterpriseId, userId);
      const reader = createUserEventReader({
        redis: deps.redis,
        key,
        ...(listener.lastEventId !== undefined ? { lastEventId: listener.lastEventId } : {}),
        send: listener.send,
        onReadError: readFailed,
      });
      const set = byKey.get(key) ?? new Set();
      byKey.set(key, set);
      set.add(reader);
      count += 1;
      const stop = () => {
        reader.stop();
        if (!set.delete(reader)) return;
        count -= 1;
        if (set.size === 0) byKey.delete(key);
        if (count === 0) {
          clearInterval(sweep);
          sweep = undefined;
        }
      };
      try {
        await subscription.ready();
        await reader.start();
      } catch (err) {
        stop();
        readFailed(err as Error);
        throw err;
      }
      sweep ??= setInterval(wakeAll, sweepMs).unref();
      return stop;
    },

    streams: () => count,
    streamsOf: (enterpriseId, userId) => byKey.get(keyOf(enterpriseId, userId))?.size ?? 0,

    close() {
      clearInterval(sweep);
      sweep = undefined;
      subscription.close();
      byKey.clear();
      count = 0;
    },
  };
}
