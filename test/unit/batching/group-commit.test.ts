import { jest } from '@jest/globals';
import { setImmediate as tick } from 'node:timers/promises';
import {
  createBatchedLookup,
  createGroupCommit,
  outcomesOfBulkWrite,
  type ItemOutcome,
} from '../../../core/platform/batching/group-commit.js';

/** A store whose flushes stay open until the test releases them. */
function controlledStore() {
  const flushes: { items: number[]; release: (outcomes?: ItemOutcome<number>[]) => void; fail: (err: Error) => void }[] = [];
  const flush = (items: number[]) =>
    new Promise<ItemOutcome<number>[]>((resolve, reject) => {
      flushes.push({ items, release: (outcomes) => resolve(outcomes ?? items.map((n) => ({ ok: true, value: n * 10 }))), fail: reject });
    });
  return { flushes, flush };
}

describe('group commit', () => {
  test('when items arrive in one turn, then one flush carries them all and each caller gets its own result', async () => {
    const store = controlledStore();
    const commit = createGroupCommit(store.flush, { maxBatch: 10, maxInFlight: 1 });
    const results = [1, 2, 3].map((n) => commit.submit(n));
    await tick();
    expect(store.flushes.map((f) => f.items)).toEqual([[1, 2, 3]]);
    store.flushes[0]?.release();
    await expect(Promise.all(results)).resolves.toEqual([10, 20, 30]);
  });

  test('when a linger is set, then items of later turns within it share the flush', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const store = controlledStore();
      const commit = createGroupCommit(store.flush, { maxBatch: 10, maxInFlight: 1, lingerMs: 20 });
      const results = [commit.submit(1)];
      await tick();
      results.push(commit.submit(2));
      jest.advanceTimersByTime(19);
      await tick();
      expect(store.flushes).toHaveLength(0);
      jest.advanceTimersByTime(1);
      await tick();
      expect(store.flushes.map((f) => f.items)).toEqual([[1, 2]]);
      store.flushes[0]?.release();
      await expect(Promise.all(results)).resolves.toEqual([10, 20]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when a linger is set but a whole batch is waiting, then it goes out at once', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const store = controlledStore();
      const commit = createGroupCommit(store.flush, { maxBatch: 3, maxInFlight: 1, lingerMs: 1000 });
      const results = [commit.submit(1), commit.submit(2)];
      await tick();
      expect(store.flushes).toHaveLength(0);
      results.push(commit.submit(3));
      await tick();
      expect(store.flushes.map((f) => f.items)).toEqual([[1, 2, 3]]);
      store.flushes[0]?.release();
      await expect(Promise.all(results)).resolves.toEqual([10, 20, 30]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('when items arrive while a flush is under way, then they wait and go out together in the next one', async () => {
    const store = controlledStore();
    const commit = createGroupCommit(store.flush, { maxBatch: 10, maxInFlight: 1 });
    const first = commit.submit(1);
    await tick();
    const later = [2, 3, 4].map((n) => commit.submit(n));
    await tick();
    expect(store.flushes).toHaveLength(1);
    store.flushes[0]?.release();
    await expect(first).resolves.toBe(10);
    await tick();
    expect(store.flushes.map((f) => f.items)).toEqual([[1], [2, 3, 4]]);
    store.flushes[1]?.release();
    await expect(Promise.all(later)).resolves.toEqual([20, 30, 40]);
  });

  test('when more items wait than a batch holds, then they are split at maxBatch and flushes overlap up to maxInFlight', async () => {
    const store = controlledStore();
    const commit = createGroupCommit(store.flush, { maxBatch: 2, maxInFlight: 2 });
    const results = [1, 2, 3, 4, 5].map((n) => commit.submit(n));
    await tick();
    expect(store.flushes.map((f) => f.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    store.flushes[0]?.release();
    await tick();
    await tick();
    expect(store.flushes.map((f) => f.items)).toEqual([[1, 2], [3, 4], [5]]);
    store.flushes[1]?.release();
    store.flushes[2]?.release();
    await expect(Promise.all(results)).resolves.toEqual([10, 20, 30, 40, 50]);
  });

  test('when one item fails, then only its caller sees the error; when the flush fails, then every caller does', async () => {
    const store = controlledStore();
    const commit = createGroupCommit(store.flush, { maxBatch: 10, maxInFlight: 1 });
    const [a, b] = [commit.submit(1), commit.submit(2)];
    await tick();
    store.flushes[0]?.release([
      { ok: true, value: 10 },
      { ok: false, error: new Error('duplicate') },
    ]);
    await expect(a).resolves.toBe(10);
    await expect(b).rejects.toThrow('duplicate');

    const [c, d] = [commit.submit(3), commit.submit(4)];
    await tick();
    store.flushes[1]?.fail(new Error('store down'));
    await expect(c).rejects.toThrow('store down');
    await expect(d).rejects.toThrow('store down');
  });

  test('when a flush throws synchronously or reports too few outcomes, then the callers are rejected, never left waiting', async () => {
    const throwing = createGroupCommit<number, number>(
      () => {
        throw new Error('bad flush');
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(throwing.submit(1)).rejects.toThrow('bad flush');
    const short = createGroupCommit<number, number>(async () => [{ ok: true, value: 1 }], { maxBatch: 10, maxInFlight: 1 });
    const [x, y] = [short.submit(1), short.submit(2)];
    await expect(x).resolves.toBe(1);
    await expect(y).rejects.toThrow('no outcome');
  });

  test('when a flush never answers, then its items fail after flushTimeoutMs and later items still go out', async () => {
    const store = controlledStore();
    const commit = createGroupCommit(store.flush, { maxBatch: 10, maxInFlight: 1, flushTimeoutMs: 20 });
    const stuck = commit.submit(1);
    await tick();
    const later = commit.submit(2);
    await expect(stuck).rejects.toThrow('did not answer within 20 ms');
    await tick();
    expect(store.flushes.map((f) => f.items)).toEqual([[1], [2]]);
    store.flushes[1]?.release();
    await expect(later).resolves.toBe(20);
    // The late answer of the stuck flush changes nothing.
    store.flushes[0]?.release();
  });

  test('when a flush reports something other than a list of outcomes, then its callers are rejected', async () => {
    const odd = createGroupCommit<number, number>(async () => 'ok' as never, { maxBatch: 10, maxInFlight: 1 });
    await expect(odd.submit(1)).rejects.toThrow('no outcomes');
  });
});

describe('outcomes of an unordered bulk write', () => {
  test('when a write-concern error comes with the write errors, or an error names a document the batch lacks, then every item fails with the original error', () => {
    const withConcern = { writeErrors: [{ index: 0, errmsg: 'dup', code: 11000 }], result: { getWriteConcernError: () => ({ code: 64 }) } };
    expect(outcomesOfBulkWrite([0, 1], 2, withConcern)).toEqual([
      { ok: false, error: withConcern },
      { ok: false, error: withConcern },
    ]);
    const unknownIndex = { writeErrors: [{ index: 7, errmsg: 'dup', code: 11000 }] };
    expect(outcomesOfBulkWrite([0, 1], 2, unknownIndex)).toEqual([
      { ok: false, error: unknownIndex },
      { ok: false, error: unknownIndex },
    ]);
  });

  test('when documents of some items failed, then exactly those items fail with the server message and code', () => {
    // Items 0 and 2 have two documents each, item 1 one: documents 0,1 → 0; 2 → 1; 3,4 → 2.
    const error = { writeErrors: [{ index: 4, errmsg: 'E11000 duplicate key', code: 11000 }] };
    const outcomes = outcomesOfBulkWrite([0, 0, 1, 2, 2], 3, error);
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false]);
    expect(outcomes[2]).toMatchObject({ ok: false, error: { message: 'E11000 duplicate key', code: 11000, cause: error } });
  });

  test('when the error is not about single documents (a network failure), then every item fails with it', () => {
    const error = new Error('connection reset');
    expect(outcomesOfBulkWrite([0, 1], 2, error)).toEqual([
      { ok: false, error },
      { ok: false, error },
    ]);
  });

  test('when nothing failed, then every item is ok', () => {
    expect(outcomesOfBulkWrite([0, 1, 1], 2, undefined)).toEqual([
      { ok: true, value: undefined },
      { ok: true, value: undefined },
    ]);
  });
});

describe('batched lookup', () => {
  test('when several callers ask for the same key in one batch, then each gets its own copy and the store is asked once', async () => {
    const loads: string[][] = [];
    const lookup = createBatchedLookup(
      (keys: string[]) => {
        loads.push(keys);
        return Promise.resolve(keys.map((key) => ({ key, tags: ['a'] })));
      },
      (doc) => doc.key,
      (doc) => doc,
    );
    const [first, second, other] = await Promise.all([lookup.submit('k1'), lookup.submit('k1'), lookup.submit('k2')]);
    expect(loads).toEqual([['k1', 'k2']]);
    expect(first).toEqual({ key: 'k1', tags: ['a'] });
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    expect(second?.tags).not.toBe(first?.tags);
    first?.tags.push('changed');
    expect(second?.tags).toEqual(['a']);
    expect(other).toEqual({ key: 'k2', tags: ['a'] });
  });

  test('when a key is unknown to the store, then its caller gets undefined', async () => {
    const lookup = createBatchedLookup(
      () => Promise.resolve([{ key: 'k1' }]),
      (doc: { key: string }) => doc.key,
      (doc) => doc,
    );
    await expect(Promise.all([lookup.submit('k1'), lookup.submit('nope')])).resolves.toEqual([{ key: 'k1' }, undefined]);
  });
});
