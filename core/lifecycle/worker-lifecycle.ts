import { Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger/logger.js';
import type { QueueName } from '../queues/queue-names.js';

export interface ManagedWorkerOptions {
  queue: QueueName;
  processor: Processor;
  connection: Redis;
  prefix: string;
  concurrency: number;
  logger: Logger;
  settings?: Pick<WorkerOptions, 'settings' | 'lockDuration' | 'stalledInterval' | 'maxStalledCount'>;
}

/**
 * A BullMQ worker created with autorun off and error listeners attached, so the process decides
 * when to start taking work (once its stores are reachable) and errors never go unheard.
 */
export function createManagedWorker(options: ManagedWorkerOptions): Worker {
  const worker = new Worker(options.queue, options.processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    autorun: false,
    removeOnComplete: { count: 1000, age: 24 * 3600 },
    removeOnFail: { count: 5000, age: 7 * 24 * 3600 },
    ...options.settings,
  });
  const log = options.logger.child({ queue: options.queue });
  worker.on('error', (err) => log.error({ err }, 'worker error'));
  worker.on('failed', (job, err) => log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'job failed'));
  worker.on('stalled', (jobId) => log.warn({ jobId }, 'job stalled; it will be retried'));
  return worker;
}

/**
 * Stops taking new jobs and waits for the ones in flight (BullMQ's close() without force does
 * exactly that); the caller bounds it with the shutdown deadline.
 */
export async function drainWorker(worker: Worker): Promise<void> {
  await worker.close();
}
