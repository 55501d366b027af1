import type { RedisClient } from '../queues/redis-connection.js';
import type { Connection } from 'mongoose';
import type { Config } from '../config/config.js';
import { connectMongo } from '../db/mongo-connection.js';
import type { Logger } from '../logger/logger.js';
import { closeQueueRegistry, createQueueRegistry, type QueueRegistry } from '../queues/queue-registry.js';
import { createProducerRedis, createWorkerRedis, waitForRedis } from '../queues/redis-connection.js';
import { requireNoEviction } from '../queues/redis-eviction-policy.js';
import type { ShutdownStep } from './shutdown.js';
import { unlessStopped } from './start-cancel.js';

/** What every worker process holds: MongoDB, a blocking Redis connection, producer queues. */
export interface WorkerResources {
  mongo: Connection;
  workerRedis: RedisClient;
  /** Fail-fast connection for plain commands (the producer queues share it). */
  redis: RedisClient;
  queues: QueueRegistry;
  /** Closing steps, in order, after the worker itself has drained. */
  closeSteps: ShutdownStep[];
}

/**
 * `prepareStore` is what every process does with MongoDB before it takes work (the start-up
 * check of core/migrations, which this folder may not import).
 */
export async function openWorkerResources(
  config: Config,
  log: Logger,
  prepareStore: (mongo: Connection, log: Logger) => Promise<void>,
  stopping?: AbortSignal,
): Promise<WorkerResources> {
  const mongo = await connectMongo(config.mongodbUri, { serverSelectionTimeoutMs: config.mongoServerSelectionTimeoutMs });
  try {
    await prepareStore(mongo, log);
  } catch (err) {
    await mongo.close();
    throw err;
  }
  const workerRedis = createWorkerRedis(config.redis);
  // Before any job is taken (waits for Redis like the worker itself would, without limit: a stop
  // asked for meanwhile gives the start up, see start-cancel.ts).
  try {
    await unlessStopped(requireNoEviction(workerRedis), stopping, 'Redis');
  } catch (err) {
    workerRedis.disconnect();
    await mongo.close();
    throw err;
  }
  const producerRedis = createProducerRedis(config.redis);
  producerRedis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
  // Fail-fast, it refuses every command until connected (a cluster client: until it has read the
  // slot map, several round trips). A job taken before then would find its send's journal entry
  // refused (the row written directly, the backlog pause blind) and its queues refusing jobs. Redis
  // answered the worker connection just now, so this wait is short; bounded as in the API.
  if (!(await waitForRedis(producerRedis))) log.warn('Redis is not reachable yet; starting anyway');
  const queues = createQueueRegistry(producerRedis, config.queuePrefix, log);
  return {
    mongo,
    workerRedis,
    redis: producerRedis,
    queues,
    closeSteps: [
      { name: 'queues', run: () => closeQueueRegistry(queues) },
      { name: 'redis', run: async () => void (await Promise.allSettled([workerRedis.quit(), producerRedis.quit()])) },
      { name: 'mongodb', run: () => mongo.close() },
    ],
  };
}
