import { copyDocument } from './document-copy.js';

/** What a flush reports for one item: its own result or its own error. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** Most items one flush carries. */
  maxBatch: number;
  /** Flushes allowed under way at once; items arriving beyond that wait for the next one. */
  maxInFlight: number;
  /**
   * A flush still unanswered after this long fails its items and frees its slot, so one stuck
   * connection cannot hold every later caller (the driver itself has no socket timeout).
   */
  flushTimeoutMs?: number;
  /**
   * Wait this long before a flush instead of one `setImmediate`: bigger batches for callers that
   * do not await the flush on a request's or job's path.
   */
  lingerMs?: number;
}

const DEFAULT_FLUSH_TIMEOUT_MS = 15_000;

/** The batching of the request and job paths' store commands. */
export const STORE_BATCHING: GroupCommitOptions = { maxBatch: 100, maxInFlight: 2 };

export interface GroupCommit<I, R> {
  submit(item: I): Promise<R>;
}

/**
 * Group commit: items submitted in the same turn of the event loop, or while the store is busy
 * with earlier flushes, go out together, so concurrent requests share one round trip instead of
 * paying one each (driver work, a write and a read on the socket, the server's command overhead).
 * An idle service waits one `setImmediate` at most. Every caller still awaits its own item's
 * acknowledgement and gets its own error; a flush that fails as a whole fails each of its items.
 */
export function createGroupCommit<I, R>(flush: (items: I[]) => Promise<ItemOutcome<R>[]>, options: GroupCommitOptions): GroupCommit<I, R> {
  const pending: { item: I; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  let inFlight = 0;
  let scheduled = false;
  let lingering: NodeJS.Timeout | undefined;

  function schedule(): void {
    if (pending.length === 0 || inFlight >= options.maxInFlight) return;
    // A full batch does not wait out the linger.
    const full = pending.length >= options.maxBatch;
    if (scheduled && !(full && lingering)) return;
    clearTimeout(lingering);
    lingering = undefined;
    scheduled = true;
    if (options.lingerMs && !full) lingering = setTimeout(drain, options.lingerMs);
    else setImmediate(drain);
  }

  function settle(batch: typeof pending, outcomes: unknown): void {
    if (!Array.isArray(outcomes)) {
      const error = new Error('group commit: the flush reported no outcomes');
      batch.forEach((entry) => entry.reject(error));
      return;
    }
    batch.forEach((entry, i) => {
      const outcome = outcomes[i] as ItemOutcome<R> | undefined;
      if (!outcome) entry.reject(new Error('group commit: the flush reported no outcome for this item'));
      else if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  function drain(): void {
    scheduled = false;
    lingering = undefined;
    while (pending.length > 0 && inFlight < options.maxInFlight) {
      const batch = pending.splice(0, options.maxBatch);
      inFlight += 1;
      let done = false;
      const finish = (settleBatch: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        inFlight -= 1;
        settleBatch();
        schedule();
      };
      const timeoutMs = options.flushTimeoutMs ?? DEFAULT_FLUSH_TIMEOUT_MS;
      const timer = setTimeout(() => {
        const error = Object.assign(new Error(`group commit: the store did not answer within ${timeoutMs} ms`), {
          name: 'StoreTimeoutError',
        });
        finish(() => batch.forEach((entry) => entry.reject(error)));
      }, timeoutMs);
      // Promise.resolve().then: a flush that throws at once or returns a plain value is handled
      // like one that rejects or resolves later.
      Promise.resolve()
        .then(() => flush(batch.map((entry) => entry.item)))
        .then(
          (outcomes) => finish(() => settle(batch, outcomes)),
          (err: unknown) => finish(() => batch.forEach((entry) => entry.reject(err))),
        );
    }
  }

  return {
    submit(item: I): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}

/**
 * Outcomes of an unordered multi-document write: items whose documents all succeeded are ok, the
 * others fail with their server error (the original error as its cause). An error that cannot be
 * pinned on documents (network, write concern, an index the batch does not know) fails them all.
 */
export function outcomesOfBulkWrite(itemOfDocument: number[], itemCount: number, error: unknown): ItemOutcome<void>[] {
  if (!error) return Array.from({ length: itemCount }, () => ({ ok: true, value: undefined }));
  const all = (): ItemOutcome<void>[] => Array.from({ length: itemCount }, () => ({ ok: false, error }));
  const { writeErrors, result } = error as { writeErrors?: unknown; result?: { getWriteConcernError?: () => unknown } };
  const list = (Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : []) as {
    index?: number;
    errmsg?: string;
    code?: number;
  }[];
  if (list.length === 0 || result?.getWriteConcernError?.()) return all();
  const failed = new Map<number, unknown>();
  for (const writeError of list) {
    const item = writeError.index === undefined ? undefined : itemOfDocument[writeError.index];
    if (item === undefined) return all();
    if (!failed.has(item))
      failed.set(item, Object.assign(new Error(writeError.errmsg ?? 'write failed', { cause: error }), { code: writeError.code }));
  }
  return Array.from({ length: itemCount }, (_, i) =>
    failed.has(i) ? { ok: false, error: failed.get(i) } : { ok: true, value: undefined },
  );
}

/** Runs one unordered multi-document write and reports each item's outcome (see above). */
export async function settleBulkWrite(
  itemOfDocument: number[],
  itemCount: number,
  write: () => Promise<unknown>,
): Promise<ItemOutcome<void>[]> {
  try {
    await write();
    return outcomesOfBulkWrite(itemOfDocument, itemCount, undefined);
  } catch (err) {
    return outcomesOfBulkWrite(itemOfDocument, itemCount, err);
  }
}

/**
 * Look-ups by key of concurrent callers in one query (`load` gets the distinct keys). Each caller
 * gets its own converted copy, even when two asked for the same key; an unknown key is undefined.
 */
export function createBatchedLookup<K, D, R>(
  load: (keys: K[]) => Promise<D[]>,
  keyOf: (doc: D) => K,
  convert: (doc: D) => R,
): GroupCommit<K, R | undefined> {
  return createGroupCommit<K, R | undefined>(async (keys) => {
    const byKey = new Map((await load([...new Set(keys)])).map((doc) => [keyOf(doc), doc]));
    // The first caller of a key takes the loaded document itself; only a key asked for again in
    // the same batch needs copies (cloning every document was 2 % of an OTP request's CPU).
    const handedOut = new Set<K>();
    return keys.map((key) => {
      const doc = byKey.get(key);
      if (doc === undefined) return { ok: true, value: undefined };
      const copy = handedOut.has(key) ? copyDocument(doc) : doc;
      handedOut.add(key);
      return { ok: true, value: convert(copy) };
    });
  }, STORE_BATCHING);
}
