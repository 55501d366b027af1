import type { Logger } from '../logger/logger.js';
import type { RedisClient } from './redis-connection.js';

/**
 * One Redis pub/sub subscription per process, opened on first use: the subscriber connection
 * (one per process, whatever the number of listeners it serves) resubscribes by itself after a
 * reconnect; a failed subscribe is forgotten, so the next use tries again. `onSubscribed` is
 * called each time the subscription is in place, the first time and after every reconnect: a
 * message published while the connection was down is lost (pub/sub keeps nothing), and a
 * listener that must not miss one catches up there.
 */
export function createChannelSubscriber(deps: {
  openSubscriber: () => RedisClient;
  channel: string;
  /** Names the subscription in warnings. */
  label: string;
  logger: Logger;
  onMessage: (message: string) => void;
  onSubscribed?: () => void;
}): { ready(): Promise<void>; close(): void } {
  let subscriber: RedisClient | undefined;
  let subscribed: Promise<void> | undefined;
  const forget = () => {
    subscriber?.disconnect();
    subscriber = undefined;
    subscribed = undefined;
  };
  return {
    ready() {
      if (!subscribed) {
        subscriber = deps.openSubscriber();
        subscriber.on('error', (err: Error) => deps.logger.warn({ err: err.message }, `${deps.label}: redis subscriber error`));
        subscriber.on('message', (from: string, message: string) => {
          if (from === deps.channel) deps.onMessage(message);
        });
        const opened = subscriber;
        subscribed = opened.subscribe(deps.channel).then(
          () => {
            const { onSubscribed } = deps;
            if (!onSubscribed) return;
            onSubscribed();
            // After a reconnect: subscribing again is a no-op for Redis when ioredis already
            // resubscribed, and its answer says the subscription is back.
            opened.on('ready', () => {
              opened
                .subscribe(deps.channel)
                .then(onSubscribed, (err: Error) =>
                  deps.logger.warn({ err: err.message }, `${deps.label}: subscribe after a reconnect failed`),
                );
            });
          },
          (err: Error) => {
            deps.logger.warn({ err: err.message }, `${deps.label}: subscribe failed`);
            forget();
            throw err;
          },
        );
      }
      return subscribed;
    },
    close: forget,
  };
}
