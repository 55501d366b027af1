import type { Connection } from 'mongoose';
import type { Logger } from '../logger/logger.js';
import type { IndexKey, IndexOptions } from './index-drift.js';
import { MIGRATE_COMMAND } from './migrate-command.js';
import { isSocketTimeout, socketTimeoutOf } from './mongo-connection.js';

/** How often a long build is reported as still running. */
const PROGRESS_EVERY_MS = 30_000;

/**
 * Where the migration command builds indexes: a connection without a socket timeout
 * (connectMongo's `forIndexBuilds`), since MongoDB answers createIndexes only once the build is
 * done, minutes on a large collection. The build is announced, and reported every
 * `progressEveryMs` while it runs.
 */
export interface IndexBuildRoute {
  connection: Connection;
  logger: Logger;
  progressEveryMs?: number;
}

/**
 * A build that the connection's socket timeout cut off: a starting process creating a missing
 * index on a large collection. MongoDB goes on building it; the migration command waits for it.
 * Names the collection and the index only.
 */
export class IndexBuildTimeoutError extends Error {
  constructor(
    readonly collection: string,
    readonly index: string,
    readonly limitMs: number,
    // The driver's network timeout: a request that meets it on a model's first use answers 503
    // (store-unavailable.ts reads the chain), as any command MongoDB left unanswered.
    cause: unknown,
  ) {
    super(
      `the index ${index} of ${collection} was not built within ${limitMs / 1000} s (a large collection, or MongoDB busy); MongoDB may still be building it. ` +
        `Run ${MIGRATE_COMMAND}, which waits for the build however long it takes, then start this version again.`,
      { cause },
    );
    this.name = 'IndexBuildTimeoutError';
  }
}

export interface IndexToBuild {
  key: IndexKey;
  options: IndexOptions & { name: string };
}

/**
 * Creates an index. Through `route` (the migration command) it waits as long as MongoDB builds,
 * saying what it builds and that it is still going; otherwise (a starting process) the connection's
 * socket timeout bounds it, and running out of time says to run the migration command instead of
 * the driver's bare network error.
 */
export async function buildIndex(connection: Connection, collection: string, index: IndexToBuild, route?: IndexBuildRoute): Promise<void> {
  if (route) return buildWaiting(connection, collection, index, route);
  try {
    await connection.collection(collection).createIndex(index.key, index.options);
  } catch (err) {
    if (!isSocketTimeout(err)) throw err;
    throw new IndexBuildTimeoutError(collection, index.options.name, socketTimeoutOf(connection), err);
  }
}

async function buildWaiting(connection: Connection, collection: string, index: IndexToBuild, route: IndexBuildRoute): Promise<void> {
  const about = { collection, index: index.options.name };
  const startedAt = Date.now();
  route.logger.info(about, 'MongoDB index build started');
  const progress = reportProgress(connection, route.logger, about, startedAt, route.progressEveryMs ?? PROGRESS_EVERY_MS);
  try {
    await route.connection.collection(collection).createIndex(index.key, index.options);
  } finally {
    progress.stop();
  }
  route.logger.info({ ...about, seconds: Math.round((Date.now() - startedAt) / 1000) }, 'MongoDB index build finished');
}

/**
 * What MongoDB's currentOp tells of a build: listed (running), with its count of documents done
 * of how many when it gives one.
 */
export interface BuildSeen {
  done?: number;
  total?: number;
}

/**
 * Logs every `everyMs` how the build stands: "still running" when MongoDB lists it in currentOp,
 * with its count of documents done where it gives one; "still waiting" when it could not be asked
 * (a user without the `inprog` privilege, the local MongoDB-wire server, a MongoDB that does not
 * answer) or does not list it, so that a line never claims a build MongoDB did not show. Read
 * through the ordinary, bounded connection: the build's own connection is busy waiting.
 */
function reportProgress(
  connection: Connection,
  logger: Logger,
  about: { collection: string; index: string },
  startedAt: number,
  everyMs: number,
): { stop: () => void } {
  let reading = false;
  let stopped = false;
  const timer = setInterval(() => {
    // A slow currentOp is not asked again on top of itself.
    if (reading) return;
    reading = true;
    void buildSeen(connection, about)
      .then((seen) => {
        // The build may have finished while currentOp was read.
        if (stopped) return;
        const elapsed = { ...about, elapsedSeconds: Math.round((Date.now() - startedAt) / 1000) };
        if (seen) logger.info({ ...elapsed, ...seen }, 'MongoDB index build still running');
        else logger.info(elapsed, 'MongoDB index build still waiting');
      })
      .finally(() => {
        reading = false;
      });
  }, everyMs);
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

async function buildSeen(connection: Connection, about: { collection: string; index: string }): Promise<BuildSeen | undefined> {
  try {
    const answer: unknown = await connection.db
      ?.admin()
      .command({ currentOp: true, 'command.createIndexes': about.collection, 'command.indexes.name': about.index });
    return buildIn(answer);
  } catch {
    // No currentOp (the local server), no privilege, no answer: the line says it is waiting.
    return undefined;
  }
}

/**
 * The build in currentOp's answer (filtered to its collection and index): undefined when no
 * operation is listed; else the first count of documents done and total that an operation carries
 * (MongoDB reports it on the build's operation; the waiting createIndexes has none).
 */
export function buildIn(answer: unknown): BuildSeen | undefined {
  const operations = (answer as { inprog?: unknown } | undefined)?.inprog;
  if (!Array.isArray(operations) || operations.length === 0) return undefined;
  for (const operation of operations as ({ progress?: { done?: unknown; total?: unknown } } | null)[]) {
    const { done, total } = operation?.progress ?? {};
    if (typeof done === 'number' && typeof total === 'number') return { done, total };
  }
  return {};
}
