import type { Connection } from 'mongoose';
import {
  compareIndexes,
  declaredIndexes,
  declaredOf,
  type DeclaredIndex,
  type ExistingIndex,
  type IndexDrift,
} from '../platform/db/index-drift.js';
import { ensureIndexes, existingIndexes, registeredModel } from '../platform/db/model-registry.js';
import { refuseDuplicateKeys, DuplicateKeysError } from '../platform/db/unique-index-build.js';
import { PRE_ENTERPRISE_INDEXES } from '../enterprises/enterprise-migration.js';
import { MIGRATE_COMMAND } from '../platform/db/migrate-command.js';
import type { Logger } from '../platform/logger/logger.js';
import { DECLARED_MODELS } from './declared-models.js';

export interface StoreCheck {
  /** Indexes whose options differ from the declarations. */
  drifted: IndexDrift[];
  /** Indexes of an older version that a migration drops (`collection.index`). */
  obsolete: string[];
}

/** A database that this version cannot run on before the migration command has run. */
export class StoreMigrationNeededError extends Error {
  constructor(readonly check: StoreCheck) {
    super(
      `MongoDB needs a migration before this version can start: run ${MIGRATE_COMMAND} with this version's settings. ` +
        describeCheck(check).join('; '),
    );
    this.name = 'StoreMigrationNeededError';
  }
}

function describeCheck(check: StoreCheck): string[] {
  return [
    ...check.drifted.map(
      (d) =>
        `${d.collection}.${d.name}: ${d.differences.map((x) => `${x.option} is ${JSON.stringify(x.existing ?? null)}, declared ${JSON.stringify(x.declared ?? null)}`).join(', ')}`,
    ),
    ...check.obsolete.map((name) => `${name}: index of an older version`),
  ];
}

/** Compares every declared model with the database, creating missing indexes on the way. */
export async function checkStore(connection: Connection): Promise<StoreCheck> {
  const drifted: IndexDrift[] = [];
  for (const { name, schema } of DECLARED_MODELS) {
    drifted.push(...(await ensureIndexes(registeredModel(connection, name, schema))).drifted);
  }
  return { drifted, obsolete: await obsoleteIndexes(connection) };
}

/** Each collection's indexes as they are now, by collection name. */
export type IndexLists = ReadonlyMap<string, ExistingIndex[]>;

const collectionOf = (schema: (typeof DECLARED_MODELS)[number]['schema']) => schema.get('collection') as string;
const declaredOfSchema = (schema: (typeof DECLARED_MODELS)[number]['schema']) =>
  declaredIndexes(schema.indexes() as [Record<string, unknown>, Record<string, unknown>][]);

/** The index lists of these collections, one listIndexes each (none for a collection named twice). */
async function readIndexLists(connection: Connection, collections: Iterable<string>): Promise<IndexLists> {
  const lists = new Map<string, ExistingIndex[]>();
  for (const collection of new Set(collections)) lists.set(collection, await existingIndexes(connection, collection));
  return lists;
}

/**
 * The same comparison as checkStore without creating anything: no model is compiled (compiling
 * one creates its collection) and no missing index is built. For `npm run migrate -- --check`,
 * which an operator runs against a production database before an upgrade.
 */
function inspectStore(lists: IndexLists): StoreCheck {
  const drifted: IndexDrift[] = [];
  for (const { schema } of DECLARED_MODELS) {
    const collection = collectionOf(schema);
    drifted.push(...compareIndexes(collection, declaredOfSchema(schema), lists.get(collection) ?? []).drifted);
  }
  return { drifted, obsolete: obsoleteIn(lists) };
}

/** What `npm run migrate -- --check` reports: the comparison, and the duplicates that would stop a run. */
export interface MigrationCheck extends StoreCheck {
  blocked: DuplicateKeysError[];
}

/**
 * The comparison of inspectStore and the duplicates of findBlockingDuplicates, for
 * `npm run migrate -- --check`: reads only, builds nothing. Each collection's index list is read
 * once and serves both: on a production database each read is a round trip, and two reads could
 * disagree should an index be built in between.
 */
export async function checkBeforeMigrating(connection: Connection): Promise<MigrationCheck> {
  const lists = await readIndexLists(connection, [
    ...DECLARED_MODELS.map(({ schema }) => collectionOf(schema)),
    ...PRE_ENTERPRISE_INDEXES.map(([collection]) => collection),
  ]);
  return { ...inspectStore(lists), blocked: await findBlockingDuplicates(connection, lists) };
}

/**
 * The unique indexes this version would build (missing ones, which every process creates at start,
 * and those whose options the migration changes) that stored documents already share a key of:
 * each would stop the migration, or a starting process, with the same error. Reads each such
 * collection once per index; builds nothing. For `npm run migrate -- --check`.
 */
async function findBlockingDuplicates(connection: Connection, lists: IndexLists): Promise<DuplicateKeysError[]> {
  const blocked: DuplicateKeysError[] = [];
  for (const { schema } of DECLARED_MODELS) {
    const collection = collectionOf(schema);
    const declared = declaredOfSchema(schema);
    const { missing, drifted } = compareIndexes(collection, declared, lists.get(collection) ?? []);
    const rebuilt = drifted
      .filter((drift) => !drift.ttlOnly)
      .map((drift) => declaredOf(drift, declared))
      .filter((index): index is DeclaredIndex => index !== undefined);
    for (const index of [...missing, ...rebuilt].filter((i) => i.options.unique)) {
      try {
        await refuseDuplicateKeys(connection, collection, index);
      } catch (err) {
        if (!(err instanceof DuplicateKeysError)) throw err;
        blocked.push(err);
      }
    }
  }
  return blocked;
}

/** The indexes of older versions in these lists (`collection.index`). */
function obsoleteIn(lists: IndexLists): string[] {
  return PRE_ENTERPRISE_INDEXES.filter(([collection, index]) => (lists.get(collection) ?? []).some((i) => i.name === index)).map(
    ([collection, index]) => `${collection}.${index}`,
  );
}

/** Indexes of older versions still in the database (`collection.index`), which a migration drops. */
export async function obsoleteIndexes(connection: Connection): Promise<string[]> {
  return obsoleteIn(
    await readIndexLists(
      connection,
      PRE_ENTERPRISE_INDEXES.map(([collection]) => collection),
    ),
  );
}

/**
 * What every process does with MongoDB before it takes work: missing indexes are created (a
 * new index changes nothing that already works), existing ones are never changed or dropped.
 * An index whose options differ from the declaration, or an index of an older version, means
 * the migration command has not run for this version:
 * - when the difference changes which writes MongoDB accepts (unique, sparse, partial filter,
 *   key) or an older version's index is still there, the process refuses to start, naming the
 *   command, since running on it could let a duplicate in or refuse valid writes;
 * - when only a TTL differs, it starts and warns: the documents are deleted on the old
 *   schedule until the command runs, and every reader checks expiry itself anyway.
 */
export async function prepareStoreAtStart(connection: Connection, logger: Logger): Promise<void> {
  const check = await checkStore(connection);
  const blocking: StoreCheck = { drifted: check.drifted.filter((d) => !d.ttlOnly), obsolete: check.obsolete };
  if (blocking.drifted.length > 0 || blocking.obsolete.length > 0) throw new StoreMigrationNeededError(blocking);
  const ttlOnly = check.drifted.filter((d) => d.ttlOnly);
  if (ttlOnly.length > 0) {
    logger.warn(
      { indexes: describeCheck({ drifted: ttlOnly, obsolete: [] }), command: MIGRATE_COMMAND },
      'MongoDB TTL indexes differ from this version; documents expire on the old schedule until the migration command runs',
    );
  }
}
