import type { Connection } from 'mongoose';

export interface ConnectionTtlCache<V> {
  /** The cached read when younger than the TTL, else a fresh one (failed reads are not kept). */
  get(connection: Connection, key: string, now?: number): Promise<V>;
  forget(connection: Connection, key: string): void;
}

/**
 * A small read-through cache per MongoDB connection (so tests with many services stay apart)
 * for data read on every request that changes rarely. Bounded: past `maxEntries` it starts over.
 */
export function createConnectionTtlCache<V>(
  ttlMs: number,
  load: (connection: Connection, key: string) => Promise<V>,
  maxEntries = 10_000,
): ConnectionTtlCache<V> {
  const caches = new WeakMap<Connection, Map<string, { readAt: number; value: Promise<V> }>>();
  const cacheOf = (connection: Connection) => {
    let cache = caches.get(connection);
    if (!cache) {
      cache = new Map();
      caches.set(connection, cache);
    }
    return cache;
  };
  return {
    get(connection, key, now = Date.now()) {
      const cache = cacheOf(connection);
      const hit = cache.get(key);
      if (hit && now - hit.readAt < ttlMs) return hit.value;
      if (cache.size >= maxEntries) cache.clear();
      const value = load(connection, key);
      cache.set(key, { readAt: now, value });
      value.catch(() => cache.delete(key));
      return value;
    },
    forget(connection, key) {
      caches.get(connection)?.delete(key);
    },
  };
}
