import type { Logger } from '../platform/logger/logger.js';
import { createChannelSubscriber } from '../platform/queues/channel-subscriber.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';
import type { SigningKeyRing } from './signing-key-ring.js';

/**
 * "The signing keys changed: read them again", told to every API process through Redis pub/sub
 * when a rotation is stored, so that a key retired at once (one that may have leaked) is refused
 * by every process within a Redis round trip and a store read, not at each one's next periodic
 * read (SIGNING_KEY_RELOAD_SECONDS). Pub/sub delivers at most once, so the periodic read stays
 * what makes every process right in the end; a process also reads again each time its
 * subscription is made or remade, as a notice may have gone by while it was disconnected.
 */
export interface SigningKeyChanges {
  /** Tells every API process; never throws. False when Redis could not take the notice (logged). */
  announce(): Promise<boolean>;
  /** Calls `onChanged` on every notice and whenever the subscription is (re)made; resolves once subscribed. */
  listen(onChanged: () => void): Promise<void>;
  close(): void;
}

/** The deployment's channel (its queue prefix), so two deployments on one Redis stay apart. */
export const signingKeyChangesChannel = (queuePrefix: string) => `${queuePrefix}:signing-keys-changed`;

/** Publishes the notice; throws when Redis does not take it. */
export async function publishSigningKeyChange(redis: RedisClient, channel: string): Promise<void> {
  await redis.publish(channel, 'changed');
}

export function createSigningKeyChanges(deps: {
  /** A command connection: publishes. */
  redis: RedisClient;
  /** Opens the subscriber connection, on the first `listen`. */
  openSubscriber: () => RedisClient;
  channel: string;
  logger: Logger;
}): SigningKeyChanges {
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of listeners) listener();
  };
  const subscription = createChannelSubscriber({
    openSubscriber: deps.openSubscriber,
    channel: deps.channel,
    label: 'signing key changes',
    logger: deps.logger,
    onMessage: tell,
    onSubscribed: tell,
  });
  return {
    async announce() {
      try {
        await publishSigningKeyChange(deps.redis, deps.channel);
        return true;
      } catch (err) {
        deps.logger.warn(
          { err: (err as Error).message },
          'signing key changes: the notice could not be published; API processes follow at their next periodic read',
        );
        return false;
      }
    },
    async listen(onChanged) {
      listeners.add(onChanged);
      await subscription.ready();
    },
    close() {
      subscription.close();
      listeners.clear();
    },
  };
}

/**
 * After a rotation stored by this process: it reads the new keys at once, and every other API
 * process is told to (at the latest each follows at its next periodic read, should the notice be
 * lost). Never throws: the rotation is stored whatever happens here.
 */
export async function followRotation(
  ring: Pick<SigningKeyRing, 'reload'>,
  changes: Pick<SigningKeyChanges, 'announce'>,
  logger: Logger,
): Promise<void> {
  await Promise.all([
    ring.reload().catch((err: unknown) => logger.warn({ err }, 'signing keys could not be read again after a rotation')),
    changes.announce(),
  ]);
}
