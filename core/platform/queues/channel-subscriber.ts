import type { Logger } from '../logger/logger.js';
import type { RedisClient } from './redis-connection.js';

/**
 * One Redis pub/sub subscription per process, opened on first use: the subscriber connection
 * (one per process, whatever the number of listeners it serves) resubscribes by itself after a
 * reconnect; a failed subscribe is forgotten, so the next use tries again.
 */
export function createChannelSubscriber(deps: {
  openSubscriber: () => RedisClient;
  channel: string;
  /** Names the subscription in warnings. */
  label: string;
  logger: Logger;
  onMessage: (message: string) => void;
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
        subscribed = subscriber.subscribe(deps.channel).then(
          () => undefined,
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
