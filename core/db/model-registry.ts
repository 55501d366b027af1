import type { Connection, Model, Schema } from 'mongoose';

// Index builds per connection and model. Models registered after start-up (syncIndexes has
// already run by then) still get their unique indexes before the first write, which the
// race-safety of insert-if-absent writes depends on.
const indexBuilds = new WeakMap<Connection, Map<string, Promise<unknown>>>();

/** Resolves once the model's declared indexes exist (built once per process and connection). */
export async function ensureIndexes<T>(model: Model<T>): Promise<void> {
  const connection = model.db;
  let builds = indexBuilds.get(connection);
  if (!builds) {
    builds = new Map();
    indexBuilds.set(connection, builds);
  }
  let build = builds.get(model.modelName);
  if (!build) {
    // init() first: mongoose creates the collection in the background when a model is compiled
    // (autoCreate), and on the local server a createCollection racing createIndexes can leave
    // the collection without its unique index.
    build = model.init().then(() => model.createIndexes());
    builds.set(model.modelName, build);
    // A failed build is retried by the next caller instead of being remembered forever.
    build.catch(() => builds.delete(model.modelName));
  }
  await build;
}

/** The connection's model `name` (registered on first use) once its declared indexes exist. */
export async function modelFor<T>(connection: Connection, name: string, schema: Schema<T>): Promise<Model<T>> {
  const model = (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
  await ensureIndexes(model);
  return model;
}

/**
 * For writes through the driver (hot paths that skip mongoose's casting): the driver would store
 * an `undefined` field as null, mongoose leaves it out.
 */
export function withoutUndefined<T extends object>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== undefined)) as T;
}
