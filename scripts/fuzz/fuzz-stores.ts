import { localServerLog, startMongoServer, startRedisServer, type LocalService } from '../local-services.js';

/**
 * The Redis and MongoDB-wire server a fuzzing run starts for itself (and stops when it ends). The
 * server's warnings and errors go to `mongo-server-fuzz.log` in `logDirectory` (`.local` unless a
 * test gives its own): a reply it could not encode closes a connection, which a run reports as a
 * failed request.
 */
export async function startFuzzStores(logDirectory?: string): Promise<{ redis: LocalService; mongo: LocalService }> {
  const [redis, mongo] = await Promise.all([startRedisServer(), startMongoServer({ log: localServerLog('fuzz', logDirectory) })]);
  return { redis, mongo };
}
