import { Cluster } from 'ioredis';
import type { Logger } from '../logger/logger.js';
import { openClusterSubscriberConnection } from './cluster-subscriber-connection.js';
import type { RedisClient } from './redis-connection.js';

/**
 * One Redis pub/sub subscription per process, opened on first use (one subscriber connection per
 * process, whatever the number of listeners it serves). `onSubscribed` is called each time the
 * subscription is in place, the first time and after every reconnect or move: a message
 * published while it was not is lost (pub/sub keeps nothing), and a listener that must not miss
 * one catches up there.
 *
 * On one Redis the connection reconnects and resubscribes by itself, and says so with `ready`; a
 * failed first subscribe is forgotten, so the next use tries again. On a Redis Cluster the
 * subscription is made on a connection of our own to one node, moved to another node when it
 * ends (see openClusterSubscriberConnection): ioredis's cluster subscription moves silently.
 * There a failed subscribe moves it too.
 *
 * Until the first subscription is in place, `ready()` is refused after FIRST_SUBSCRIBE_WAIT_MS
 * while it goes on being made (`onSubscribed` tells when it is): with Redis down (one Redis, whose
 * subscriber connection queues the command until it is back, or every node of a cluster) it would
 * otherwise wait for as long as the outage, and the requests behind it with it (a stream opening,
 * a `?wait=` past its time) instead of being answered as during any other Redis outage.
 */
/** How long a use waits for the first subscription before it is refused (a local connection and one command take milliseconds). */
export const FIRST_SUBSCRIBE_WAIT_MS = 3000;

export function createChannelSubscriber(deps: {
  openSubscriber: () => RedisClient;
  channel: string;
  /** Names the subscription in warnings. */
  label: string;
  logger: Logger;
  onMessage: (message: string) => void;
  onSubscribed?: () => void;
  /** Overrides FIRST_SUBSCRIBE_WAIT_MS. */
  firstSubscribeWaitMs?: number;
}): { ready(): Promise<void>; close(): void } {
  let subscriber: RedisClient | undefined;
  let moving: { close(): void } | undefined;
  let subscribed: Promise<void> | undefined;
  let inPlace = false;
  let warnedWaiting = false;
  const forget = () => {
    moving?.close();
    moving = undefined;
    subscriber?.disconnect();
    subscriber = undefined;
    subscribed = undefined;
    inPlace = false;
  };
  const waitMs = deps.firstSubscribeWaitMs ?? FIRST_SUBSCRIBE_WAIT_MS;

  /** `attempt`, or a refusal once `waitMs` have passed without it (the attempt goes on). */
  const withinFirstWait = (attempt: Promise<void>): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const refused = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (!warnedWaiting) deps.logger.warn(`${deps.label}: not subscribed within ${waitMs} ms; still trying`);
        warnedWaiting = true;
        reject(new Error(`${deps.label}: Redis has not taken the subscription yet`));
      }, waitMs);
      timer.unref();
    });
    return Promise.race([attempt, refused]).finally(() => clearTimeout(timer));
  };
  const warnOnError = (connection: RedisClient) =>
    connection.on('error', (err: Error) => deps.logger.warn({ err: err.message }, `${deps.label}: redis subscriber error`));

  /** Subscribes on `connection`; resolves once subscribed, after telling `onSubscribed`. */
  const subscribeOn = (connection: RedisClient): Promise<void> => {
    connection.on('message', (from: string, message: string) => {
      if (from === deps.channel) deps.onMessage(message);
    });
    return connection.subscribe(deps.channel).then(() => {
      const { onSubscribed } = deps;
      if (!onSubscribed) return;
      onSubscribed();
      // After a reconnect: subscribing again is a no-op for Redis when ioredis already
      // resubscribed, and its answer says the subscription is back.
      connection.on('ready', () => {
        connection
          .subscribe(deps.channel)
          .then(onSubscribed, (err: Error) => deps.logger.warn({ err: err.message }, `${deps.label}: subscribe after a reconnect failed`));
      });
    });
  };

  /** On a cluster: settles once a node's connection is subscribed; a node that fails is left for another. */
  const subscribeThroughNodes = (cluster: Cluster): Promise<void> =>
    new Promise((resolve) => {
      const nodes = openClusterSubscriberConnection(cluster, (connection) => {
        warnOnError(connection);
        subscribeOn(connection).then(resolve, (err: Error) => {
          // Closed meanwhile: nothing to move.
          if (moving !== nodes) return;
          deps.logger.warn({ err: err.message }, `${deps.label}: subscribe failed; trying another cluster node`);
          // Its end opens a connection to another node.
          connection.disconnect();
        });
      });
      moving = nodes;
    });

  return {
    ready() {
      if (!subscribed) {
        subscriber = deps.openSubscriber();
        warnOnError(subscriber);
        const attempt =
          subscriber instanceof Cluster
            ? subscribeThroughNodes(subscriber)
            : subscribeOn(subscriber).catch((err: Error) => {
                deps.logger.warn({ err: err.message }, `${deps.label}: subscribe failed`);
                forget();
                throw err;
              });
        subscribed = attempt;
        warnedWaiting = false;
        attempt.then(
          () => {
            if (subscribed === attempt) inPlace = true;
          },
          () => undefined,
        );
      }
      return inPlace ? subscribed : withinFirstWait(subscribed);
    },
    close: forget,
  };
}
