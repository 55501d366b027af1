/**
 * Sets `key` in `map` as its newest entry, dropping the oldest entry first when the map already
 * holds `maxEntries`: a Map keeps insertion order, so re-setting a key makes it the youngest and
 * the first key is always the one least recently set. For per-process caches of answers about
 * tokens and sessions, which anyone can make grow.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  map.delete(key);
  if (map.size >= maxEntries) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
