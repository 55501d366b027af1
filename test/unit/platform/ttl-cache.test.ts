import { createTtlCache } from '../../../core/platform/ttl-cache.js';

/** A load whose answers the test settles by hand, counting the reads. */
function manualLoad() {
  const reads: { key: string; resolve: (value: string) => void; reject: (err: Error) => void }[] = [];
  const load = (key: string) =>
    new Promise<string>((resolve, reject) => {
      reads.push({ key, resolve, reject });
    });
  return { load, reads };
}

describe('per-process TTL cache', () => {
  test('when a key is read again within the TTL, then the first read answers; at the TTL it is read afresh', async () => {
    const { load, reads } = manualLoad();
    const cache = createTtlCache(1000, load);
    const first = cache.get('a', 0);
    reads[0]?.resolve('one');
    expect(await cache.get('a', 999)).toBe('one');
    expect(await first).toBe('one');
    const again = cache.get('a', 1000);
    reads[1]?.resolve('two');
    expect(await again).toBe('two');
    expect(reads).toHaveLength(2);
  });

  test('when a key is forgotten, then the next read goes to the store', async () => {
    const { load, reads } = manualLoad();
    const cache = createTtlCache(1000, load);
    const first = cache.get('a', 0);
    reads[0]?.resolve('one');
    await first;
    cache.forget('a');
    const next = cache.get('a', 1);
    reads[1]?.resolve('two');
    expect(await next).toBe('two');
  });

  test('when a read fails, then it is not kept', async () => {
    const { load, reads } = manualLoad();
    const cache = createTtlCache(1000, load);
    const failed = cache.get('a', 0);
    reads[0]?.reject(new Error('store down'));
    await expect(failed).rejects.toThrow('store down');
    const next = cache.get('a', 1);
    reads[1]?.resolve('back');
    expect(await next).toBe('back');
    expect(reads).toHaveLength(2);
  });

  test('when a read forgotten while in flight fails, then the fresh read that replaced it stays cached', async () => {
    const { load, reads } = manualLoad();
    const cache = createTtlCache(1000, load);
    const stale = cache.get('a', 0);
    // An admin change: this process forgets the key while the old read is still under way.
    cache.forget('a');
    const fresh = cache.get('a', 1);
    reads[1]?.resolve('fresh');
    expect(await fresh).toBe('fresh');
    reads[0]?.reject(new Error('store down'));
    await expect(stale).rejects.toThrow('store down');
    const third = cache.get('a', 2);
    expect(reads).toHaveLength(2);
    expect(await third).toBe('fresh');
  });
  test('when many unknown keys are read, then the found entries stay cached: misses fill only their own map', async () => {
    const reads: string[] = [];
    const cache = createTtlCache(
      1000,
      (key: string) => {
        reads.push(key);
        return Promise.resolve(key.startsWith('known') ? key : null);
      },
      { maxEntries: 3, isMiss: (value) => value === null },
    );
    expect(await cache.get('known-a', 0)).toBe('known-a');
    expect(await cache.get('known-b', 0)).toBe('known-b');
    for (let i = 0; i < 10; i++) expect(await cache.get(`made-up-${i}`, 1)).toBeNull();
    expect(await cache.get('made-up-9', 2)).toBeNull();
    expect(await cache.get('known-a', 3)).toBe('known-a');
    expect(await cache.get('known-b', 3)).toBe('known-b');
    // The two found entries and the ten misses were read once each; the last miss came from its map.
    expect(reads).toHaveLength(12);
  });

  test('when found entries pass the bound, then that map starts over', async () => {
    const reads: string[] = [];
    const cache = createTtlCache(
      1000,
      (key: string) => {
        reads.push(key);
        return Promise.resolve(key);
      },
      { maxEntries: 2 },
    );
    for (const key of ['a', 'b', 'c', 'a']) await cache.get(key, 0);
    expect(reads).toEqual(['a', 'b', 'c', 'a']);
  });
});
