import type { Connection, Model, Schema } from 'mongoose';
import { isMongoError, MONGO_CODES } from './mongo-error-codes.js';
import { compareIndexes, declaredIndexes, type ExistingIndex, type IndexComparison } from './index-drift.js';
import { createDeclaredIndex } from './unique-index-build.js';
import type { IndexBuildRoute } from './index-build.js';

// Index work per connection and model. Models registered after start-up still get their
// missing indexes before the first write, which the race-safety of insert-if-absent writes
// depends on.
const indexBuilds = new WeakMap<Connection, Map<string, Promise<IndexComparison>>>();

/**
 * While the migration command runs: where its connection's models build the indexes they find
 * missing (`route`: a connection without a socket timeout; none: through the connection itself),
 * and the report's list they are named in (`collection.index`). The command's steps reach models
 * of their own (the users' unique keys, before mobile numbers are keyed), whose builds must wait
 * as long as the migration's and be reported with its own.
 */
export interface MigrationIndexBuilds {
  route: IndexBuildRoute | undefined;
  created: string[];
}

const migrationBuilds = new WeakMap<Connection, MigrationIndexBuilds>();

/** `builds` apply to the models of `connection` from now on (undefined: no longer). */
export function duringMigration(connection: Connection, builds: MigrationIndexBuilds | undefined): void {
  if (builds) migrationBuilds.set(connection, builds);
  else migrationBuilds.delete(connection);
}

/** The indexes a collection has; none when it does not exist yet. */
export async function existingIndexes(connection: Connection, collection: string): Promise<ExistingIndex[]> {
  try {
    return (await connection.collection(collection).indexes()) as ExistingIndex[];
  } catch (err) {
    if (isMongoError(err, MONGO_CODES.NamespaceNotFound)) return [];
    throw err;
  }
}

/** How the model's declared indexes compare with its collection's. */
export async function compareModelIndexes<T>(model: Model<T>): Promise<IndexComparison> {
  const declared = declaredIndexes(model.schema.indexes() as [Record<string, unknown>, Record<string, unknown>][]);
  return compareIndexes(model.collection.collectionName, declared, await existingIndexes(model.db, model.collection.collectionName));
}

async function createMissingIndexes<T>(model: Model<T>): Promise<IndexComparison> {
  // init() first: mongoose creates the collection in the background when a model is compiled
  // (autoCreate), and on the local server a createCollection racing createIndexes can leave
  // the collection without its unique index.
  await model.init();
  const comparison = await compareModelIndexes(model);
  for (const index of comparison.missing) {
    const migration = migrationBuilds.get(model.db);
    await createDeclaredIndex(model.db, model.collection.collectionName, index, migration?.route);
    migration?.created.push(`${model.collection.collectionName}.${index.name}`);
  }
  return comparison;
}

/**
 * Resolves once the model's declared indexes exist (done once per process and connection).
 * Only missing indexes are created: an index whose options differ from the declaration is left
 * as it is (changing it is the migration command's job, `npm run migrate`), so a changed
 * declaration can never make every command of a model fail at start-up (MongoDB refuses to
 * create an index that exists with other options). The comparison is returned for the
 * start-up check (core/migrations/store-check.ts).
 */
export async function ensureIndexes<T>(model: Model<T>): Promise<IndexComparison> {
  const connection = model.db;
  let builds = indexBuilds.get(connection);
  if (!builds) {
    builds = new Map();
    indexBuilds.set(connection, builds);
  }
  let build = builds.get(model.modelName);
  if (!build) {
    build = createMissingIndexes(model);
    builds.set(model.modelName, build);
    // A failed build is retried by the next caller instead of being remembered forever.
    build.catch(() => builds.delete(model.modelName));
  }
  return build;
}

/** Forgets what was built on this connection (after a migration changed the indexes). */
export function forgetIndexBuilds(connection: Connection): void {
  indexBuilds.delete(connection);
}

/** The connection's model `name`, registered on first use. */
export function registeredModel<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/** The connection's model `name` (registered on first use) once its declared indexes exist. */
export async function modelFor<T>(connection: Connection, name: string, schema: Schema<T>): Promise<Model<T>> {
  const model = registeredModel(connection, name, schema);
  await ensureIndexes(model);
  return model;
}

/**
 * For writes through the driver (hot paths that skip mongoose's casting): the driver would store
 * an `undefined` field as null, mongoose leaves it out.
 */
export function withoutUndefined<T extends object>(doc: T): T {
  // A plain loop: no entry arrays per document on the request path.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(doc)) {
    const value = (doc as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out as T;
}
