/** What a flush reports for one item: its own result or its own error. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** Most items one flush carries. */
  maxBatch: number;
  /** Flushes allowed under way at once; items arriving beyond that wait for the next one. */
  maxInFlight: number;
}

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

  function schedule(): void {
    if (scheduled || pending.length === 0 || inFlight >= options.maxInFlight) return;
    scheduled = true;
    setImmediate(drain);
  }

  function settle(batch: typeof pending, outcomes: ItemOutcome<R>[]): void {
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (!outcome) entry.reject(new Error('group commit: the flush reported no outcome for this item'));
      else if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  function drain(): void {
    scheduled = false;
    while (pending.length > 0 && inFlight < options.maxInFlight) {
      const batch = pending.splice(0, options.maxBatch);
      inFlight += 1;
      let flushing: Promise<ItemOutcome<R>[]>;
      try {
        flushing = flush(batch.map((entry) => entry.item));
      } catch (err) {
        flushing = Promise.reject(err);
      }
      flushing
        .then(
          (outcomes) => settle(batch, outcomes),
          (err: unknown) => batch.forEach((entry) => entry.reject(err)),
        )
        .finally(() => {
          inFlight -= 1;
          schedule();
        });
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

/** Outcomes of an unordered multi-document write: items whose documents all succeeded are ok. */
export function outcomesOfBulkWrite(itemOfDocument: number[], itemCount: number, error: unknown): ItemOutcome<void>[] {
  const failed = new Map<number, unknown>();
  const writeErrors = (error as { writeErrors?: unknown } | undefined)?.writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  if (error && list.length === 0) return Array.from({ length: itemCount }, () => ({ ok: false, error }));
  for (const writeError of list as { index: number; errmsg?: string; code?: number }[]) {
    const item = itemOfDocument[writeError.index];
    if (item !== undefined && !failed.has(item)) {
      failed.set(item, Object.assign(new Error(writeError.errmsg ?? 'write failed'), { code: writeError.code }));
    }
  }
  return Array.from({ length: itemCount }, (_, i) => (failed.has(i) ? { ok: false, error: failed.get(i) } : { ok: true, value: undefined }));
}
