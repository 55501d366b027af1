import mongoose, { type Connection } from 'mongoose';
import { ensureIndexes } from './model-registry.js';

/**
 * How long a command waits for a reachable MongoDB before it fails. Short on purpose: while
 * MongoDB is down a request should get its 503 (with Retry-After) within a second instead of
 * hanging; a healthy server is selected at once, so this only shortens outages.
 */
export const SERVER_SELECTION_TIMEOUT_MS = 700;

/**
 * A command unanswered this long on an open connection fails (a frozen server, a half-open
 * connection). Far above any command this service sends; the request path's batched writes give
 * up earlier (group commit's own timeout). A `socketTimeoutMS` in MONGODB_URI replaces it (a slow
 * server with very large collections may need more for a bulk expiry).
 */
export const SOCKET_TIMEOUT_MS = 30_000;

/** How long a starting process keeps trying to reach MongoDB before it gives up. */
const BOOT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Opens a dedicated mongoose connection (not the global default), so tests can run several
 * services side by side, each on its own database.
 * No `serverApi`: the local MongoDB-wire server has no `hello` command.
 * No command buffering: mongoose would otherwise hold commands for 10 s while disconnected; the
 * driver's server selection bounds the wait instead.
 */
export async function connectMongo(uri: string, options: { dbName?: string; bootTimeoutMs?: number } = {}): Promise<Connection> {
  const giveUpAt = Date.now() + (options.bootTimeoutMs ?? BOOT_CONNECT_TIMEOUT_MS);
  for (;;) {
    const connection = mongoose.createConnection(uri, {
      dbName: options.dbName,
      autoIndex: false,
      autoCreate: true,
      bufferCommands: false,
      serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
      // A server that holds a connection open without answering frees it after this long.
      ...(/[?&]socketTimeoutMS=/i.test(uri) ? {} : { socketTimeoutMS: SOCKET_TIMEOUT_MS }),
      maxPoolSize: 50,
    });
    try {
      await connection.asPromise();
      return connection;
    } catch (err) {
      await connection.close().catch(() => undefined);
      if (Date.now() >= giveUpAt) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
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
