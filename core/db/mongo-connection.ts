import mongoose, { type Connection } from 'mongoose';
import { ensureIndexes } from './model-registry.js';

/**
 * Opens a dedicated mongoose connection (not the global default), so tests can run several
 * services side by side, each on its own database.
 * No `serverApi`: the local MongoDB-wire server has no `hello` command.
 */
export async function connectMongo(uri: string, options: { dbName?: string } = {}): Promise<Connection> {
  const connection = mongoose.createConnection(uri, {
    dbName: options.dbName,
    autoIndex: false,
    autoCreate: true,
    serverSelectionTimeoutMS: 5000,
    maxPoolSize: 50,
  });
  await connection.asPromise();
  return connection;
}

/** Creates the indexes declared in every registered model's schema (idempotent). */
export async function syncIndexes(connection: Connection): Promise<void> {
  for (const model of Object.values(connection.models)) await ensureIndexes(model);
}

export async function pingMongo(connection: Connection): Promise<void> {
  const db = connection.db;
  if (!db || connection.readyState !== 1) throw new Error('MongoDB is not connected');
  await db.admin().command({ ping: 1 });
}
