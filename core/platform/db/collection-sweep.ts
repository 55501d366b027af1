import type { Collection } from 'mongoose';
import type { Logger } from '../logger/logger.js';

/**
 * Documents per slice of a data migration: each command reads or writes at most this many, well
 * within the connections' socket timeout on any MongoDB, however large the collection.
 */
const SLICE_SIZE = 1000;
/** A progress line every this many slices (every 100,000 documents by default). */
const PROGRESS_EVERY_SLICES = 100;

/** How a sweep is cut: the defaults, or smaller slices in tests. */
export interface SweepSlices {
  sliceSize?: number;
  progressEverySlices?: number;
}

export interface Sweep<T> {
  /** The migration step, named in progress lines. */
  step: string;
  projection: Record<string, 0 | 1>;
  /**
   * The order the slices follow: an index's key (its order costs MongoDB no sort), which must
   * exist; `_id` by default. The find names that index (`hint`) rather than leave the choice to
   * MongoDB's planner, which may pick another index the query could use and sort every document
   * in memory before its first answer (the local MongoDB-wire server ignores a hint and answers in
   * the order asked for). Documents are not filtered by the query: a filter the index does not
   * serve would let one batch scan any number of documents that do not match.
   */
  order?: Record<string, 1>;
  /** Migrates a slice (at most `sliceSize` documents); returns how many documents it changed. */
  migrate: (slice: T[]) => Promise<number>;
}

/**
 * Reads a whole collection in slices, in index order, and gives each slice to `migrate` before the
 * next is read. Every find and getMore carries at most a slice, and the writes of a slice are
 * bounded by it, so no command of a data migration runs into the connection's socket timeout on a
 * large collection; the cursor is idle only while a slice is migrated, far from MongoDB's 10
 * minutes. Resumable by design: a slice's writes are conditional on what was read, so a run cut
 * off anywhere is finished by the next, which passes over migrated documents without writing.
 * Logs every `progressEverySlices` slices how many documents it read and changed (counts only:
 * no stored values).
 */
export async function sweepCollection<T>(
  collection: Collection,
  sweep: Sweep<T>,
  logger: Logger,
  slices: SweepSlices = {},
): Promise<{ read: number; changed: number }> {
  const sliceSize = slices.sliceSize ?? SLICE_SIZE;
  const progressEvery = slices.progressEverySlices ?? PROGRESS_EVERY_SLICES;
  const cursor = collection.find(
    {},
    { projection: sweep.projection, sort: sweep.order ?? { _id: 1 }, ...(sweep.order ? { hint: sweep.order } : {}), batchSize: sliceSize },
  );
  let read = 0;
  let changed = 0;
  let sliceCount = 0;
  let slice: T[] = [];
  const migrateSlice = async () => {
    changed += await sweep.migrate(slice);
    read += slice.length;
    slice = [];
    sliceCount += 1;
    if (sliceCount % progressEvery === 0)
      logger.info({ step: sweep.step, collection: collection.collectionName, read, changed }, 'data migration in progress');
  };
  for await (const doc of cursor) {
    slice.push(doc as T);
    if (slice.length === sliceSize) await migrateSlice();
  }
  if (slice.length > 0) await migrateSlice();
  return { read, changed };
}
