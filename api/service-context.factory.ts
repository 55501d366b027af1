import { createClientsRepository } from '../core/clients/clients.repository.js';
import { ensureDemoClient } from '../core/clients/demo-client.js';
import type { Config } from '../core/platform/config/config.js';
import { connectMongo, pingMongo } from '../core/platform/db/mongo-connection.js';
import type { Logger } from '../core/platform/logger/logger.js';
import { createMetrics } from '../core/platform/metrics/metrics.js';
import { prepareStoreAtStart } from '../core/migrations/store-check.js';
import { createDispatchRetry } from '../core/platform/queues/dispatch-retry.queue.js';
import { createDispatchEnqueuer, enqueueDispatch } from '../core/platform/queues/dispatch.queue.js';
import { closeQueueRegistry, createQueueRegistry } from '../core/platform/queues/queue-registry.js';
import { createProducerRedis, createWorkerRedis, pingRedis, waitForRedis } from '../core/platform/queues/redis-connection.js';
import { createNotificationEndEvents } from '../core/notifications/notification-end-events.js';
import { createNotificationUserEvents } from '../core/notifications/notification-user-events.js';
import { createSigningKeyChanges, signingKeyChangesChannel } from '../core/auth/signing-key-changes.js';
import { warnUnlessNoEviction } from '../core/platform/queues/redis-eviction-policy.js';
import { seedTemplates } from '../core/templates/templates.seeder.js';
import { createTemplatesRepository } from '../core/templates/templates.repository.js';
import type { ServiceContext } from './service-context.js';

/** Connects MongoDB and Redis and builds the context; `close` releases all of it. */
export async function createServiceContext(config: Config, logger: Logger): Promise<ServiceContext & { close: () => Promise<void> }> {
  const mongo = await connectMongo(config.mongodbUri, { serverSelectionTimeoutMs: config.mongoServerSelectionTimeoutMs });
  try {
    await prepareStoreAtStart(mongo, logger);
  } catch (err) {
    // A process that refuses to start leaves nothing open behind it.
    await mongo.close();
    throw err;
  }
  // Commands issued in the same turn of the event loop (a request's two rate limits, other
  // requests' limits and enqueues) leave in one write instead of one each: fewer system calls
  // for the API and for Redis. Every caller still gets its own reply or error. A command
  // unanswered in time fails, so a Redis that hangs is handled as one that is down.
  const redis = createProducerRedis(config.redis, { enableAutoPipelining: true, commandTimeout: config.redisCommandTimeoutMs });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const queues = createQueueRegistry(redis, config.queuePrefix, logger);
  const metrics = createMetrics(queues, redis, { mongodb: () => pingMongo(mongo), redis: () => pingRedis(redis) });
  const dispatch = createDispatchRetry({
    enqueue: createDispatchEnqueuer(queues.dispatch),
    enqueueById: (id) => enqueueDispatch(queues.dispatch, id),
    redis,
    logger,
  });
  const notificationEnds = createNotificationEndEvents({
    redis,
    // A subscriber connection waits out Redis outages (and resubscribes) instead of failing fast.
    openSubscriber: () => createWorkerRedis(config.redis),
    channel: `${config.queuePrefix}:notification-ended`,
    logger,
  });
  const userEvents = createNotificationUserEvents({
    redis,
    openSubscriber: () => createWorkerRedis(config.redis),
    prefix: config.queuePrefix,
    logger,
  });
  const signingKeyChanges = createSigningKeyChanges({
    redis,
    openSubscriber: () => createWorkerRedis(config.redis),
    channel: signingKeyChangesChannel(config.queuePrefix),
    logger,
  });
  const ctx: ServiceContext = { config, logger, mongo, redis, queues, metrics, dispatch, notificationEnds, userEvents, signingKeyChanges };
  if (!(await waitForRedis(redis))) logger.warn('Redis is not reachable yet; starting anyway');
  else await warnUnlessNoEviction(redis, logger);
  // Start-up bootstraps, once per process before any request: the composition root (composeApi) builds the repositories requests use.
  await seedTemplates(createTemplatesRepository(mongo), logger);
  if (config.demoApprover) await ensureDemoClient(createClientsRepository(mongo), config.publicUrl);
  return {
    ...ctx,
    close: async () => {
      await dispatch.close(2000);
      await closeQueueRegistry(queues);
      notificationEnds.close();
      userEvents.close();
      signingKeyChanges.close();
      redis.disconnect();
      await mongo.close();
    },
  };
}
