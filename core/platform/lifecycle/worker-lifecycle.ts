import { Worker, type Processor } from 'bullmq';
import type { RedisClient } from '../queues/redis-connection.js';
import type { Config } from '../config/config.js';
import { maskContactsInText, type Logger } from '../logger/logger.js';
import { JOB_RETENTION } from '../queues/job-retention.js';
import type { QueueName } from '../queues/queue-names.js';

export interface ManagedWorkerOptions {
  queue: QueueName;
  processor: Processor;
  connection: RedisClient;
  config: Pick<Config, 'queuePrefix' | 'workerLockDurationMs'>;
  concurrency: number;
  logger: Logger;
  /** Retry delay for a failed job; the default is BullMQ's per-job backoff option. */
  backoffStrategy?: (attemptsMade: number, err: Error | undefined) => number;
}

export interface RunningWorker {
  shutdown: () => Promise<boolean>;
}

/**
 * How fast a job whose worker died (kill -9, lost host) runs again, and how safe a long job is.
 * A live worker renews its locks every quarter of the lock duration, so a job keeps its lock
 * through three missed renewals (a Redis blip or a stalled event loop of up to 3/4 of it). The
 * stalled check runs every half lock duration: it marks active jobs, and the next check moves
 * those whose lock has expired back to waiting. A dead worker's job therefore runs again at most
 * one lock duration plus one check interval after the death (8 s lock: at most 12 s).
 */
export function lockTimings(lockDurationMs: number): { lockDuration: number; lockRenewTime: number; stalledInterval: number } {
  return { lockDuration: lockDurationMs, lockRenewTime: Math.floor(lockDurationMs / 4), stalledInterval: Math.floor(lockDurationMs / 2) };
}

/**
 * BullMQ keeps a failed job's message and stack in Redis (JOB_RETENTION: days) and shows them on
 * the queue dashboard, and a provider's refusal can name the address ("The 'To' number +1555… is
 * not a valid phone number"): they are masked there as in the logs. The error object itself is
 * kept, since its class and fields steer retries and backoff.
 */
function maskingFailures(processor: Processor): Processor {
  return async (job, token, signal) => {
    try {
      return (await processor(job, token, signal)) as unknown;
    } catch (err) {
      if (err instanceof Error) {
        err.message = maskContactsInText(err.message);
        if (err.stack !== undefined) err.stack = maskContactsInText(err.stack);
      }
      throw err;
    }
  };
}

/**
 * A BullMQ worker created with autorun off and error listeners attached, so the process decides
 * when to start taking work (once its stores are reachable) and errors never go unheard.
 */
export function createManagedWorker(options: ManagedWorkerOptions): Worker {
  const worker = new Worker(options.queue, maskingFailures(options.processor), {
    connection: options.connection,
    prefix: options.config.queuePrefix,
    concurrency: options.concurrency,
    autorun: false,
    ...lockTimings(options.config.workerLockDurationMs),
    ...JOB_RETENTION,
    ...(options.backoffStrategy
      ? {
          settings: {
            backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) => options.backoffStrategy?.(attemptsMade, err) ?? 0,
          },
        }
      : {}),
  });
  const log = options.logger.child({ queue: options.queue });
  worker.on('error', (err) => log.error({ err }, 'worker error'));
  // At debug level only: which process ran which job, to follow work across scaled-out workers.
  worker.on('completed', (job) => log.debug({ jobId: job.id }, 'job completed'));
  worker.on('failed', (job, err) => log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'job failed'));
  worker.on('stalled', (jobId) => log.warn({ jobId }, 'job stalled; it will be retried'));
  return worker;
}

/** Starts taking jobs and resolves once the worker is connected and running. */
export async function runManagedWorker(worker: Worker, log: Logger): Promise<void> {
  void worker.run();
  await worker.waitUntilReady();
  log.info({ queue: worker.name, concurrency: worker.concurrency }, `${worker.name} worker running`);
}

/**
 * Stops taking new jobs and waits for the ones in flight (BullMQ's close() without force does
 * exactly that); the caller bounds it with the shutdown deadline.
 */
export async function drainWorker(worker: Worker): Promise<void> {
  await worker.close();
}
