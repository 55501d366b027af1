import type { KeyChain, SigningKeys } from './signing-key-chains.js';

/** How often at most a process reads the stored keys again for tokens naming a key it does not know. */
export const UNKNOWN_KID_RELOAD_INTERVAL_MS = 5000;

/** A process's signing keys, kept current from the store. */
export interface SigningKeyRing {
  /** The keys to sign and verify with now. */
  current(): Promise<SigningKeys>;
  /**
   * The keys for a token naming `kid`, which the current keys do not hold: read again from the
   * store (another process may have made it since this one read), at most once per
   * UNKNOWN_KID_RELOAD_INTERVAL_MS for the whole process. Tokens arriving while a read is under
   * way wait for it rather than being refused.
   */
  forUnknownKid(kid: string): Promise<SigningKeys>;
  /** Reads the keys again now, after any read under way: the process that rotated them follows at once. */
  reload(): Promise<void>;
}

export interface SigningKeyRingOptions {
  /** How often the keys are read again (SIGNING_KEY_RELOAD_SECONDS), so rotations reach this process. */
  reloadIntervalMs: number;
  /** Which chain signs access tokens (ACCESS_TOKEN_SIGNING_ALG), and the keys at a moment. */
  keysAt: (chains: KeyChain[], t: number) => SigningKeys;
  /** A read that failed after the first (the process goes on with the keys it has). */
  onReadError?: (err: unknown) => void;
  /** Each new view of the keys (after a read, or when a stored moment passes): for the process's metrics. */
  onKeys?: (keys: SigningKeys) => void;
  now?: () => number;
}

/**
 * The process's signing keys: read from the store on first use, then again every
 * `reloadIntervalMs` in the background of the request that finds them due (so no request waits,
 * and none costs a store read), and for tokens naming an unknown key (forUnknownKid). Between
 * reads the keys follow the clock: a rotated key starts signing, and a retired one is removed, at
 * the moments the rotation stored, in every process at once. A process idle for two intervals
 * reads before answering, so it never signs with a key set that old.
 */
export function createSigningKeyRing(read: () => Promise<KeyChain[]>, options: SigningKeyRingOptions): SigningKeyRing {
  const now = options.now ?? Date.now;
  const interval = options.reloadIntervalMs;
  let chains: KeyChain[] | undefined;
  let loadedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let unknownKidReadAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  let lastReadError: unknown;
  let view: SigningKeys | undefined;

  const readNow = (): Promise<void> => {
    if (!reading) {
      attemptedAt = now();
      reading = read()
        .then(
          (loaded) => {
            chains = loaded;
            loadedAt = now();
            view = undefined;
            lastReadError = undefined;
          },
          (err: unknown) => {
            lastReadError = err;
            throw err;
          },
        )
        .finally(() => {
          reading = undefined;
        });
    }
    return reading;
  };
  const quietly = (pending: Promise<void>) =>
    pending.catch((err: unknown) => {
      options.onReadError?.(err);
    });
  const viewNow = (): SigningKeys => {
    const t = now();
    if (!view || t >= view.validUntil) {
      view = options.keysAt(chains as KeyChain[], t);
      options.onKeys?.(view);
    }
    return view;
  };

  const current = async (): Promise<SigningKeys> => {
    // The first read's failure is the caller's (no keys to go on with); the next call tries again.
    if (!chains) await readNow();
    const t = now();
    if (t - attemptedAt >= interval) {
      const pending = quietly(readNow());
      if (t - loadedAt >= 2 * interval) await pending;
    }
    return viewNow();
  };

  // A kid still unknown while the store cannot be read may be a valid token's (a key made since):
  // the read's error, not a refusal, so the caller answers "try again" (503), never a 401.
  const unlessUnreadable = (): SigningKeys => {
    if (lastReadError !== undefined) throw lastReadError;
    return viewNow();
  };
  const forUnknownKid = async (kid: string): Promise<SigningKeys> => {
    const known = await current();
    if (known.all.some((key) => key.kid === kid)) return known;
    if (reading) {
      await quietly(reading);
      return unlessUnreadable();
    }
    if (now() - unknownKidReadAt < UNKNOWN_KID_RELOAD_INTERVAL_MS) return unlessUnreadable();
    unknownKidReadAt = now();
    await quietly(readNow());
    return unlessUnreadable();
  };

  // A read under way may have queried the store before the change this caller made: wait for it,
  // then read again (a leaked key retired at once must end in this process at once).
  const reload = async (): Promise<void> => {
    if (reading) await quietly(reading);
    await readNow();
  };

  return { current, forUnknownKid, reload };
}
