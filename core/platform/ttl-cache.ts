export interface TtlCache<V> {
  /** The cached read when younger than the TTL, else a fresh one (failed reads are not kept). */
  get(key: string, now?: number): Promise<V>;
  forget(key: string): void;
}

export interface TtlCacheOptions<V> {
  /** At most this many found entries, and as many misses; past it a map starts over. */
  maxEntries?: number;
  /** Answers that found nothing (an unknown id): kept apart from the rest (see below). */
  isMiss?: (value: V) => boolean;
}

interface Entry<V> {
  readAt: number;
  value: Promise<V>;
}

/**
 * A small read-through cache for data read on every request that changes rarely. Each process
 * builds its own at its composition root, so tests with many services stay apart.
 *
 * Bounded, in two maps: what was found, and what was not (or is still being read). Anyone can ask
 * for unknown ids (a token request with a made-up client_id), so misses fill only their own map; a
 * flood of them never pushes out the entries real requests use.
 */
export function createTtlCache<V>(ttlMs: number, load: (key: string) => Promise<V>, options: TtlCacheOptions<V> = {}): TtlCache<V> {
  const { maxEntries = 10_000, isMiss = () => false } = options;
  const found = new Map<string, Entry<V>>();
  const missingOrPending = new Map<string, Entry<V>>();
  const put = (map: Map<string, Entry<V>>, key: string, entry: Entry<V>) => {
    if (map.size >= maxEntries && !map.has(key)) map.clear();
    map.set(key, entry);
  };
  const fresh = (entry: Entry<V> | undefined, now: number) => (entry && now - entry.readAt < ttlMs ? entry : undefined);
  return {
    get(key, now = Date.now()) {
      const hit = fresh(found.get(key), now) ?? fresh(missingOrPending.get(key), now);
      if (hit) return hit.value;
      const entry = { readAt: now, value: load(key) };
      put(missingOrPending, key, entry);
      // Only its own entry moves or goes: a read forgotten while under way (an admin change) may
      // have been replaced by a fresh one.
      entry.value.then(
        (value) => {
          if (missingOrPending.get(key) !== entry || isMiss(value)) return;
          missingOrPending.delete(key);
          put(found, key, entry);
        },
        () => {
          if (missingOrPending.get(key) === entry) missingOrPending.delete(key);
        },
      );
      return entry.value;
    },
    forget(key) {
      found.delete(key);
      missingOrPending.delete(key);
    },
  };
}
