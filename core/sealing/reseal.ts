import type { Connection, mongo } from 'mongoose';
import { decryptSecretWithKey, encryptSecret } from '../crypto/secret-box.js';
import { acceptedKeys } from '../crypto/previous-keys.js';
import type { Logger } from '../platform/logger/logger.js';
import { SEALED_COLLECTIONS, type SealedCollection, type SealedValue } from './sealed-values.js';

/** What one run did with the sealed values of one collection. */
export interface ResealCounts {
  /** Sealed with the current key already: left as they are. */
  current: number;
  /** Opened with a previous key and now sealed with the current one. */
  resealed: number;
  /** Changed by the service between this run's read and its write: left to the next run. */
  changedMeanwhile: number;
  /** Opened by none of the keys (sealed with a key no longer configured, or altered). */
  unopenable: number;
}

export interface ResealReport {
  collections: Record<string, ResealCounts>;
  total: ResealCounts;
}

type Outcome = keyof ResealCounts;

/** The value opened with one of the previous keys, or undefined when the current key sealed it; throws when no key opens it. */
function openWithPreviousKey(value: SealedValue, key: Buffer): string | undefined {
  try {
    decryptSecretWithKey(value.sealed, key, value.context);
    return undefined;
  } catch {
    // not the current key's: try the previous ones below
  }
  for (const previous of acceptedKeys(key).slice(1)) {
    try {
      return decryptSecretWithKey(value.sealed, previous, value.context);
    } catch {
      // the next previous key
    }
  }
  throw new Error('no configured key opens it');
}

async function resealValue(collection: mongo.Collection, id: unknown, value: SealedValue, key: Buffer): Promise<Outcome> {
  let plain: string | undefined;
  try {
    plain = openWithPreviousKey(value, key);
  } catch {
    return 'unopenable';
  }
  if (plain === undefined) return 'current';
  // Only while the value is still the one read: a value the service wrote meanwhile (sealed with
  // the current key, or with a previous one by a process not yet given the new key) is its own.
  const { matchedCount } = await collection.updateOne({ _id: id, [value.path]: value.sealed } as mongo.Filter<mongo.Document>, {
    $set: { [value.path]: encryptSecret(plain, key, value.context) },
  });
  return matchedCount === 1 ? 'resealed' : 'changedMeanwhile';
}

/**
 * Visits every sealed value of one collection and counts what `visit` says of each; names each
 * value no key opens in the log (collection, id, field), never the value: an operator finds it,
 * nobody reads the box from a log.
 */
async function tallyCollection<C extends { [K in keyof C]: number } & { unopenable: number }>(
  connection: Connection,
  spec: SealedCollection,
  counts: C,
  visit: (collection: mongo.Collection, id: unknown, value: SealedValue) => Promise<keyof C>,
  logger: Logger,
): Promise<C> {
  const db = connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  const collection = db.collection(spec.collection);
  for await (const doc of collection.find(spec.filter).batchSize(500)) {
    for (const value of spec.values(doc)) {
      const outcome = await visit(collection, doc._id, value);
      (counts[outcome] as number) += 1;
      if (outcome === 'unopenable')
        logger.warn({ collection: spec.collection, id: String(doc._id), field: value.path }, 'sealed value opens with no configured key');
    }
  }
  return counts;
}

/** Runs `tally` over every sealed collection: the counts per collection and their total. */
async function tallyStore<C extends { [K in keyof C]: number } & { unopenable: number }>(
  empty: () => C,
  tally: (spec: SealedCollection, counts: C) => Promise<C>,
): Promise<{ collections: Record<string, C>; total: C }> {
  const report = { collections: {} as Record<string, C>, total: empty() };
  for (const spec of SEALED_COLLECTIONS) {
    const counts = await tally(spec, empty());
    report.collections[spec.collection] = counts;
    for (const outcome of Object.keys(counts) as (keyof C)[]) (report.total[outcome] as number) += counts[outcome];
  }
  return report;
}

/**
 * Re-seals every value kept in MongoDB under `key` (OTP_ENCRYPTION_KEY), opening those the
 * previous keys sealed (OTP_ENCRYPTION_KEYS_PREVIOUS, carried by `key`). Idempotent, and safe
 * while the service runs: each write is conditional on the value read, so nothing written
 * meanwhile is overwritten; such values are counted and left to the next run.
 */
export async function resealStore(connection: Connection, key: Buffer, logger: Logger): Promise<ResealReport> {
  const empty = (): ResealCounts => ({ current: 0, resealed: 0, changedMeanwhile: 0, unopenable: 0 });
  return tallyStore(empty, (spec, counts) =>
    tallyCollection(connection, spec, counts, (collection, id, value) => resealValue(collection, id, value, key), logger),
  );
}

/** What a check found in one collection: which key each sealed value opens with. */
export interface SealCheckCounts {
  /** Sealed with the current key. */
  current: number;
  /** Sealed with a previous key: a re-seal run would re-seal it; dropping that key would lose it. */
  previousKey: number;
  /** Opened by none of the keys (sealed with a key no longer configured, or altered). */
  unopenable: number;
}

export interface SealCheckReport {
  collections: Record<string, SealCheckCounts>;
  total: SealCheckCounts;
}

/**
 * Which key each value kept in MongoDB opens with, writing nothing: the question before a
 * previous key is dropped (is anything left that only it opens?). A process still sealing with
 * that key shows here as `previousKey`, as it does in a re-seal run's `resealed`.
 */
export async function checkStoreSeals(connection: Connection, key: Buffer, logger: Logger): Promise<SealCheckReport> {
  const empty = (): SealCheckCounts => ({ current: 0, previousKey: 0, unopenable: 0 });
  return tallyStore(empty, (spec, counts) =>
    tallyCollection(connection, spec, counts, (_collection, _id, value) => Promise.resolve(sealState(value, key)), logger),
  );
}

function sealState(value: SealedValue, key: Buffer): keyof SealCheckCounts {
  try {
    return openWithPreviousKey(value, key) === undefined ? 'current' : 'previousKey';
  } catch {
    return 'unopenable';
  }
}
