export interface TtlCache<V> {
  /** The cached read when younger than the TTL, else a fresh one (failed reads are not kept). */
  get(key: string, now?: number): Promise<V>;
  forget(key: string): void;
}

/**
 * A small read-through cache for data read on every request that changes rarely. Each process
 * builds its own at its composition root, so tests with many services stay apart. Bounded: past
 * `maxEntries` it starts over.
 */
export function createTtlCache<V>(ttlMs: number, load: (key: string) => Promise<V>, maxEntries = 10_000): TtlCache<V> {
  const cache = new Map<string, { readAt: number; value: Promise<V> }>();
  return {
    get(key, now = Date.now()) {
      const hit = cache.get(key);
      if (hit && now - hit.readAt < ttlMs) return hit.value;
      if (cache.size >= maxEntries) cache.clear();
      const value = load(key);
      cache.set(key, { readAt: now, value });
      // Only its own entry: a read forgotten while under way may have been replaced by a fresh one.
      value.catch(() => {
        if (cache.get(key)?.value === value) cache.delete(key);
      });
      return value;
    },
    forget(key) {
      cache.delete(key);
    },
  };
}
