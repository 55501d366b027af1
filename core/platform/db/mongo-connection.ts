import mongoose, { type Connection } from 'mongoose';
import { watchReachability } from './mongo-reachability.js';
import { defaultsNotInUri } from './mongo-uri-options.js';

// Mongoose records a stack trace (new Error().stack) on every query it runs, only to show it if the
// same query object is run twice (a programming error that fails either way). On the enrollment
// path that was about 1 % of the API's CPU; the error is still thrown, without that stack.
mongoose.set({ skipOriginalStackTraces: true });

/**
 * How long a command waits for a suitable server (the primary, for writes) before it fails. It
 * has to outlast a replica-set election (about 10-12 s with MongoDB's default election timeout),
 * so that a failover delays commands instead of failing them. A MongoDB that is down altogether
 * does not make the API wait this long: see mongo-reachability.ts.
 */
export const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 15_000;

/**
 * A command unanswered this long on an open connection fails (a frozen server, a half-open
 * connection). Far above any command this service sends; the request path's batched writes give
 * up earlier (group commit's own timeout). A `socketTimeoutMS` in MONGODB_URI replaces it (a slow
 * server with very large collections may need more for a bulk expiry).
 */
export const SOCKET_TIMEOUT_MS = 30_000;

/**
 * The socket timeout a connection runs with: SOCKET_TIMEOUT_MS unless MONGODB_URI set one; 0 is
 * an operator's explicit `socketTimeoutMS=0` (connectMongo always sets one otherwise), no timeout.
 */
export function socketTimeoutOf(connection: Connection): number {
  return connection.getClient().options.socketTimeoutMS ?? SOCKET_TIMEOUT_MS;
}

/** The driver gave up on a command left unanswered for the socket timeout. */
export function isSocketTimeout(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'MongoNetworkTimeoutError';
}

/**
 * A write waits this long for a majority of the replica set to have it, then fails (the write
 * is on the primary but not yet durable; every write of this service can be repeated). Without
 * it a replica set that lost its majority would hold every write until the socket timeout.
 */
export const WRITE_CONCERN_TIMEOUT_MS = 10_000;

/**
 * The settings of every connection, each applied only where MONGODB_URI does not set it:
 * - `w: 'majority'`: an acknowledged write survives the loss of the primary (MongoDB's own
 *   default on replica sets since 5.0, made explicit so that a changed server default or an
 *   arbiter-based topology cannot weaken it silently);
 * - `retryWrites`: a write interrupted by a failover is retried once on the new primary (on a
 *   replica set; a standalone server, like the local one, has no retryable writes);
 * - the timeouts above.
 */
export function connectionDefaults(uri: string, serverSelectionTimeoutMs = DEFAULT_SERVER_SELECTION_TIMEOUT_MS) {
  return defaultsNotInUri(
    uri,
    {
      w: 'majority' as const,
      wtimeoutMS: WRITE_CONCERN_TIMEOUT_MS,
      retryWrites: true,
      serverSelectionTimeoutMS: serverSelectionTimeoutMs,
      socketTimeoutMS: SOCKET_TIMEOUT_MS,
    },
    { w: ['writeConcern'], wtimeoutMS: ['wtimeout'] },
  );
}

/** How long a starting process keeps trying to reach MongoDB before it gives up. */
const BOOT_CONNECT_TIMEOUT_MS = 30_000;

export interface ConnectMongoOptions {
  dbName?: string;
  bootTimeoutMs?: number;
  /** MONGODB_SERVER_SELECTION_TIMEOUT_MS; a serverSelectionTimeoutMS in the URI wins. */
  serverSelectionTimeoutMs?: number;
  /**
   * For the migration command's index builds: no socket timeout, whatever MONGODB_URI says.
   * MongoDB answers createIndexes only once the build is done, minutes on a collection of tens of
   * millions of documents; the command waits (an operator stops it with Ctrl-C, and MongoDB
   * finishes the build anyway). One connection: builds run one after the other.
   */
  forIndexBuilds?: boolean;
}

/**
 * Opens a dedicated mongoose connection (not the global default), so tests can run several
 * services side by side, each on its own database.
 * No `serverApi`: the local MongoDB-wire server has no `hello` command.
 * No command buffering: mongoose would otherwise hold commands for 10 s while disconnected; the
 * driver's server selection bounds the wait instead.
 */
export async function connectMongo(uri: string, options: ConnectMongoOptions = {}): Promise<Connection> {
  const giveUpAt = Date.now() + (options.bootTimeoutMs ?? BOOT_CONNECT_TIMEOUT_MS);
  for (;;) {
    const connection = mongoose.createConnection(uri, {
      dbName: options.dbName,
      autoIndex: false,
      autoCreate: true,
      bufferCommands: false,
      ...connectionDefaults(uri, options.serverSelectionTimeoutMs),
      maxPoolSize: 50,
      ...(options.forIndexBuilds ? { socketTimeoutMS: 0, maxPoolSize: 1 } : {}),
    });
    try {
      await connection.asPromise();
      watchReachability(connection);
      return connection;
    } catch (err) {
      await connection.close().catch(() => undefined);
      if (Date.now() >= giveUpAt) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Readiness: any reachable member answers (`nearest`), so a process stays ready through an
 * election, when commands wait for the new primary; a MongoDB known to be down fails at once
 * (mongo-reachability.ts).
 */
export async function pingMongo(connection: Connection): Promise<void> {
  const db = connection.db;
  if (!db || connection.readyState !== 1) throw new Error('MongoDB is not connected');
  await db.admin().command({ ping: 1 }, { readPreference: 'nearest' });
}
