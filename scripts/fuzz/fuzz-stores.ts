import { localServerLog, startMongoServer, startRedisServer, type LocalService } from '../local-services.js';

/**
 * The Redis and MongoDB-wire server a fuzzing run starts for itself (and stops when it ends). The
 * server's warnings and errors go to `.local/mongo-server-fuzz.log`: a reply it could not encode
 * closes a connection, which a run reports as a failed request.
 */
export async function startFuzzStores(): Promise<{ redis: LocalService; mongo: LocalService }> {
  const [redis, mongo] = await Promise.all([startRedisServer(), startMongoServer({ log: localServerLog('fuzz') })]);
  return { redis, mongo };
}
