import { setNewest } from './bounded-map.js';

/** A remembered answer, or the read of it still under way, and when that read began. */
type Entry<V> = { checkedAt: number } & ({ settled: true; value: V } | { settled: false; pending: Promise<V> });

export interface RecheckedCacheOptions<K, V> {
  /** Reads the answer for `key` as of `now`. */
  load: (key: K, now: number) => Promise<V>;
  /** How long an answer is used before it is read again. */
  recheckMs: number;
  /** At most this many keys; past it the least recently read go first. */
  maxEntries?: number;
  /** Answers that can never change (a revoked token): used for good, never read again. */
  isFinal?: (value: V) => boolean;
  /** The time when a caller gives none (epoch ms). */
  clock?: () => number;
}

/**
 * A per-process cache of answers about things anyone can name (tokens, sessions): each key's
 * answer is read at most once per `recheckMs`, so a change made in another process is seen within
 * that window, and look-ups made while a read is under way share it instead of each reading the
 * store. A remembered answer is returned as is, not in a promise, so a hit costs no extra turn of
 * the event loop. A failed read is not remembered: the next look-up reads again. Bounded, because
 * anyone can make it grow.
 */
export class RecheckedCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly load: (key: K, now: number) => Promise<V>;
  private readonly recheckMs: number;
  private readonly maxEntries: number;
  private readonly isFinal: (value: V) => boolean;
  private readonly clock: () => number;

  constructor(options: RecheckedCacheOptions<K, V>) {
    this.load = options.load;
    this.recheckMs = options.recheckMs;
    this.maxEntries = options.maxEntries ?? 10000;
    this.isFinal = options.isFinal ?? (() => false);
    this.clock = options.clock ?? Date.now;
  }

  /** The answer for `key`: the remembered one within its window, else a fresh read (shared while under way). */
  get(key: K, now = this.clock()): V | Promise<V> {
    const entry = this.entries.get(key);
    if (entry?.settled && this.isFinal(entry.value)) return entry.value;
    if (entry && now - entry.checkedAt < this.recheckMs) return entry.settled ? entry.value : entry.pending;
    const pending = this.load(key, now).then(
      (value) => {
        // A final answer set while this read was under way (the read can predate the write that
        // made it final) stands, and so does anything newer: a later read that finished first, or
        // an answer this process set meanwhile.
        if (!this.holdsFinal(key) && !this.holdsNewer(key, now)) this.remember(key, { settled: true, value, checkedAt: now });
        return value;
      },
      (err: unknown) => {
        if (!this.holdsFinal(key) && !this.holdsNewer(key, now)) this.entries.delete(key);
        throw err;
      },
    );
    this.remember(key, { settled: false, pending, checkedAt: now });
    return pending;
  }

  /** Remembers `value` for `key` as read at `now`, without reading (this process made the change). */
  set(key: K, value: V, now = this.clock()): void {
    this.remember(key, { settled: true, value, checkedAt: now });
  }

  private holdsFinal(key: K): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.settled && this.isFinal(entry.value);
  }

  private holdsNewer(key: K, checkedAt: number): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.checkedAt > checkedAt;
  }

  private remember(key: K, entry: Entry<V>): void {
    setNewest(this.entries, key, entry, this.maxEntries);
  }
}
