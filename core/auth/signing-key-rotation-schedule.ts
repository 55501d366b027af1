import type { Logger } from '../platform/logger/logger.js';
import { ConflictError } from '../platform/errors/app-error.js';
import { newestKeySigningSince, type KeyChain } from './signing-key-chains.js';
import { rotateSigningKeys, type RotationStores, type SigningKeyRotation } from './signing-key-rotation.js';

/** How often each API process looks whether the keys are due (a rotation is due by days, so an hour late is nothing). */
export const ROTATION_CHECK_INTERVAL_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What one look found: rotated here, not due yet, done by another process first, or a key the service cannot rotate. */
export type ScheduledRotationOutcome = 'rotated' | 'not-due' | 'rotated-elsewhere' | 'configured';

export interface ScheduledRotation {
  /** Looks once: rotates when the access-token key has signed for SIGNING_KEY_ROTATION_DAYS. */
  check(): Promise<ScheduledRotationOutcome>;
  /** Looks soon after start (at a random moment of the first interval, so processes started together do not all look at once), then every interval. */
  start(): void;
  /** Stops looking and waits for a look under way. */
  stop(): Promise<void>;
}

export interface ScheduledRotationOptions {
  stores: RotationStores;
  /** Reads the stored key chains (one query). */
  readChains: () => Promise<KeyChain[]>;
  /** SIGNING_KEY_ROTATION_DAYS (more than 0). */
  periodDays: number;
  /** After this process rotated: read the keys here and tell the other processes. */
  afterRotation: (rotation: SigningKeyRotation) => Promise<void>;
  logger: Logger;
  checkIntervalMs?: number;
  now?: () => number;
}

/**
 * Routine rotation of the token signing keys by the service itself (SIGNING_KEY_ROTATION_DAYS):
 * each API process looks every hour whether the key signing access tokens has signed for the
 * period, and if so rotates as `POST /admin/signing-keys/rotation` does without `retireAtOnce`
 * (published first, old tokens valid until they expire: nothing is refused). Every process may
 * find it due at the same moment; the rotation goes ahead only while the key it found due is still
 * the newest, and the stored name of a successor is a lock, so exactly one rotates. Recorded as
 * `signing-keys.rotated` by the `service` actor.
 */
export function createScheduledRotation(options: ScheduledRotationOptions): ScheduledRotation {
  const now = options.now ?? Date.now;
  const interval = options.checkIntervalMs ?? ROTATION_CHECK_INTERVAL_MS;
  const periodMs = options.periodDays * DAY_MS;
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<unknown> | undefined;
  let stopped = false;

  const check = async (): Promise<ScheduledRotationOutcome> => {
    const chains = await options.readChains();
    const access = chains.find((chain) => chain.alg === options.stores.settings.accessTokenSigningAlg);
    if (!access) return 'not-due';
    if (access.configured) return 'configured';
    const newest = newestKeySigningSince(access);
    if (newest.since === undefined || newest.since + periodMs > now()) return 'not-due';
    try {
      const rotation = await rotateSigningKeys(options.stores, {
        ifNewestIs: newest.key.kid,
        actor: { type: 'service' },
        comments: `scheduled: the key signed for ${options.periodDays} days (SIGNING_KEY_ROTATION_DAYS)`,
        now: new Date(now()),
      });
      options.logger.info(
        { rotated: rotation.rotated.map(({ alg, kid, previousKid }) => ({ alg, kid, previousKid })) },
        'signing keys rotated on schedule',
      );
      await options.afterRotation(rotation);
      return 'rotated';
    } catch (err) {
      if (err instanceof ConflictError) return 'rotated-elsewhere';
      throw err;
    }
  };

  const lookThenWait = (delayMs: number) => {
    timer = setTimeout(() => {
      looking = check()
        .catch((err: unknown) =>
          options.logger.warn({ err }, 'scheduled rotation of the signing keys: the look failed; next look in an hour'),
        )
        .finally(() => {
          looking = undefined;
          if (!stopped) lookThenWait(interval);
        });
    }, delayMs);
    // A look due is no reason to keep a stopping process alive.
    timer.unref();
  };

  return {
    check,
    start() {
      if (timer || stopped) return;
      lookThenWait(Math.floor(Math.random() * interval));
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await looking;
    },
  };
}
