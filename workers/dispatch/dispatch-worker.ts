import type { Config } from '../../core/config/config.js';
import { connectMongo, syncIndexes } from '../../core/db/mongo-connection.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { startSweeper } from '../../core/deliveries/delivery-sweeper.js';
import { createManagedWorker, drainWorker } from '../../core/lifecycle/worker-lifecycle.js';
import { createShutdown } from '../../core/lifecycle/shutdown.js';
import type { Logger } from '../../core/logger/logger.js';
import { otpKeysFromConfig } from '../../core/otp/otp-keys.js';
import { createProviders } from '../../core/providers/providers.factory.js';
import { dispatchBackoffMs, requeueDispatch } from '../../core/queues/dispatch.queue.js';
import { createQueueRegistry } from '../../core/queues/queue-registry.js';
import { createProducerRedis, createWorkerRedis } from '../../core/queues/redis-connection.js';
import { findTemplate } from '../../core/templates/templates.repository.js';
import { createDispatchProcessor } from './dispatch.processor.js';

export interface RunningWorker {
  shutdown: () => Promise<boolean>;
}

/** The dispatch worker and its delivery sweeper, ready and taking work. */
export async function startDispatchWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  const log = logger.child({ worker: 'dispatch' });
  const mongo = await connectMongo(config.mongodbUri);
  const deliveries = createDeliveriesRepository(mongo);
  const providers = createProviders(config, mongo, log);
  await syncIndexes(mongo);
  const keys = otpKeysFromConfig(config);
  const workerRedis = createWorkerRedis(config.redisUrl);
  const producerRedis = createProducerRedis(config.redisUrl);
  producerRedis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
  const queues = createQueueRegistry(producerRedis, config.queuePrefix, log);

  const worker = createManagedWorker({
    queue: 'dispatch',
    processor: createDispatchProcessor({
      deliveries,
      findTemplate: (name) => findTemplate(mongo, name),
      providers,
      encryptionKey: keys.encryptionKey,
      twilioStatusCallbackUrl: `${config.publicUrl}/webhooks/twilio/status`,
      logger: log,
    }),
    connection: workerRedis,
    prefix: config.queuePrefix,
    concurrency: config.concurrency.dispatch,
    logger: log,
    settings: {
      lockDuration: config.workerLockDurationMs,
      stalledInterval: config.workerLockDurationMs,
      settings: { backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) => dispatchBackoffMs(attemptsMade, err) },
    },
  });
  const sweeper = startSweeper(
    { deliveries, enqueue: (id) => requeueDispatch(queues.dispatch, id), logger: log, graceMs: config.sweeperGraceMs },
    config.sweeperIntervalMs,
  );
  void worker.run();
  await worker.waitUntilReady();
  log.info({ concurrency: config.concurrency.dispatch }, 'dispatch worker running');

  const shutdown = createShutdown(
    [
      { name: 'sweeper', run: () => sweeper.stop() },
      { name: 'dispatch jobs in flight', run: () => drainWorker(worker) },
      { name: 'queues', run: () => Promise.all(Object.values(queues).map((q) => q.close())) },
      { name: 'redis', run: async () => (await Promise.allSettled([workerRedis.quit(), producerRedis.quit()]), undefined) },
      { name: 'mongodb', run: () => mongo.close() },
    ],
    log,
    config.shutdownDeadlineMs,
  );
  return { shutdown };
}
