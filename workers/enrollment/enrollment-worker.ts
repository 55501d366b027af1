import type { Config } from '../../core/config/config.js';
import { connectMongo, syncIndexes } from '../../core/db/mongo-connection.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createManagedWorker, drainWorker } from '../../core/lifecycle/worker-lifecycle.js';
import { createShutdown } from '../../core/lifecycle/shutdown.js';
import type { Logger } from '../../core/logger/logger.js';
import { otpKeysFromConfig } from '../../core/otp/otp-keys.js';
import { enqueueDispatch } from '../../core/queues/dispatch.queue.js';
import { createQueueRegistry } from '../../core/queues/queue-registry.js';
import { createProducerRedis, createWorkerRedis } from '../../core/queues/redis-connection.js';
import { createActivationDeliveries } from '../../core/users/activation-deliveries.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { createSendActivationProcessor } from './send-activation.processor.js';

export interface RunningWorker {
  shutdown: () => Promise<boolean>;
}

/** The enrollment worker: turns enrollment jobs into activation deliveries and dispatch jobs. */
export async function startEnrollmentWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const log = logger.child({ worker: 'enrollment' });
  const mongo = await connectMongo(config.mongodbUri);
  const keys = otpKeysFromConfig(config);
  const activationDeliveries = createActivationDeliveries({
    users: createUsersRepository(mongo),
    deliveries: createDeliveriesRepository(mongo),
    enqueueDispatch: (id) => enqueueDispatch(queues.dispatch, id),
    keys,
    logger: log,
  });
  await syncIndexes(mongo);
  const workerRedis = createWorkerRedis(config.redisUrl);
  const producerRedis = createProducerRedis(config.redisUrl);
  producerRedis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
  const queues = createQueueRegistry(producerRedis, config.queuePrefix, log);

  const worker = createManagedWorker({
    queue: 'enrollment',
    processor: createSendActivationProcessor(activationDeliveries),
    connection: workerRedis,
    prefix: config.queuePrefix,
    concurrency: config.concurrency.enrollment,
    logger: log,
  });
  void worker.run();
  await worker.waitUntilReady();
  log.info({ concurrency: config.concurrency.enrollment }, 'enrollment worker running');

  const shutdown = createShutdown(
    [
      { name: 'enrollment jobs in flight', run: () => drainWorker(worker) },
      { name: 'queues', run: () => Promise.all(Object.values(queues).map((q) => q.close())) },
      { name: 'redis', run: async () => (await Promise.allSettled([workerRedis.quit(), producerRedis.quit()]), undefined) },
      { name: 'mongodb', run: () => mongo.close() },
    ],
    log,
    config.shutdownDeadlineMs,
  );
  return { shutdown };
}
