import { RecheckedCache } from '../../../core/platform/rechecked-cache.js';

/** A load whose answers the test settles by hand, recording each read with the time it was asked for. */
function manualLoad() {
  const reads: { key: string; now: number; resolve: (value: string) => void; reject: (err: Error) => void }[] = [];
  const load = (key: string, now: number) =>
    new Promise<string>((resolve, reject) => {
      reads.push({ key, now, resolve, reject });
    });
  return { load, reads };
}

describe('re-checked cache', () => {
  test('when a key is asked again within the window, then the remembered answer is returned as is; at the window it is read again', async () => {
    const { load, reads } = manualLoad();
    const cache = new RecheckedCache({ load, recheckMs: 1000 });
    const first = cache.get('a', 0);
    reads[0]?.resolve('one');
    expect(await first).toBe('one');
    expect(cache.get('a', 999)).toBe('one');
    const again = cache.get('a', 1000);
    expect(again).toBeInstanceOf(Promise);
    reads[1]?.resolve('two');
    expect(await again).toBe('two');
    expect(reads.map((read) => [read.key, read.now])).toEqual([
      ['a', 0],
      ['a', 1000],
    ]);
  });

  test('when an older read finishes after a newer one, then the newer answer stays remembered', async () => {
    const { load, reads } = manualLoad();
    const cache = new RecheckedCache({ load, recheckMs: 1000 });
    const older = cache.get('a', 0);
    // The window passes while the first read hangs: the next look-up reads again and finishes first.
    const newer = cache.get('a', 1000);
    reads[1]?.resolve('revoked');
    expect(await newer).toBe('revoked');
    reads[0]?.resolve('active');
    expect(await older).toBe('active');
    expect(cache.get('a', 1500)).toBe('revoked');
    cache.set('a', 'set here', 1600);
    const stale = cache.get('a', 2600);
    const afterSet = cache.get('a', 2700);
    expect(afterSet).toBe(stale);
    cache.set('a', 'set later', 2800);
    reads[2]?.resolve('read before the set');
    await stale;
    expect(cache.get('a', 2900)).toBe('set later');
  });

  test('when look-ups come while a read is under way, then they share it', async () => {
    const { load, reads } = manualLoad();
    const cache = new RecheckedCache({ load, recheckMs: 1000 });
    const asked = [cache.get('a', 0), cache.get('a', 1), cache.get('a', 500)];
    expect(reads).toHaveLength(1);
    reads[0]?.resolve('one');
    expect(await Promise.all(asked)).toEqual(['one', 'one', 'one']);
    expect(reads).toHaveLength(1);
  });

  test('when a read fails, then every look-up sharing it fails and the next one reads again', async () => {
    const { load, reads } = manualLoad();
    const cache = new RecheckedCache({ load, recheckMs: 1000 });
    const asked = [cache.get('a', 0), cache.get('a', 1)];
    reads[0]?.reject(new Error('store down'));
    for (const failing of asked) await expect(failing).rejects.toThrow('store down');
    const again = cache.get('a', 2);
    expect(reads).toHaveLength(2);
    reads[1]?.resolve('one');
    expect(await again).toBe('one');
  });

  test('when more keys are read than it holds, then the least recently read is forgotten first', async () => {
    let reads = 0;
    const load = async (key: string) => {
      reads += 1;
      return key;
    };
    const cache = new RecheckedCache({ load, recheckMs: 1000, maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) await cache.get(key, 0);
    expect(cache.get('b', 0)).toBe('b');
    expect(cache.get('c', 0)).toBe('c');
    expect(reads).toBe(3);
    expect(await cache.get('a', 0)).toBe('a');
    expect(reads).toBe(4);
  });

  test('when an answer is final, then it is never read again, and a read under way when it was set does not replace it', async () => {
    const { load, reads } = manualLoad();
    const cache = new RecheckedCache({ load, recheckMs: 1000, isFinal: (value: string) => value === 'final' });
    const underWay = cache.get('a', 0);
    cache.set('a', 'final', 1);
    reads[0]?.resolve('not yet');
    expect(await underWay).toBe('not yet');
    expect(cache.get('a', 2)).toBe('final');
    expect(cache.get('a', 60000)).toBe('final');
    expect(reads).toHaveLength(1);
  });

  test('when no time is given, then the injected clock decides the window', async () => {
    const { load, reads } = manualLoad();
    let now = 0;
    const cache = new RecheckedCache({ load, recheckMs: 1000, clock: () => now });
    cache.set('a', 'set');
    now = 999;
    expect(cache.get('a')).toBe('set');
    now = 1000;
    const again = cache.get('a');
    reads[0]?.resolve('read');
    expect(await again).toBe('read');
    expect(reads.map((read) => read.now)).toEqual([1000]);
  });
});
