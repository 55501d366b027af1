import type { Config } from '../core/platform/config/config.js';
import type { RunningWorker } from '../core/platform/lifecycle/worker-lifecycle.js';
import type { Logger } from '../core/platform/logger/logger.js';
import { StartCancelledError } from '../core/platform/lifecycle/start-cancel.js';
import { startDispatchWorker } from './dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from './enrollment/enrollment-worker.js';
import { startNotificationWorker } from './notifications/notification-worker.js';

export type WorkerStarter = (config: Config, logger: Logger, stopping?: AbortSignal) => Promise<RunningWorker>;

const EVERY_WORKER: WorkerStarter[] = [startDispatchWorker, startEnrollmentWorker, startNotificationWorker];

/** Shuts every worker down at once; true when each one's shutdown succeeded. */
async function shutdownAll(running: RunningWorker[]): Promise<boolean> {
  return (await Promise.all(running.map((w) => w.shutdown()))).every(Boolean);
}

/**
 * Runs every worker in this process (for `npm start`); production runs each worker's own
 * main.ts as a separate Procfile process instead. When one fails to start, or `stopping` aborts
 * the start (StartCancelledError), those already started are shut down (their jobs in flight
 * finish, their connections close) before the start fails: the caller exits, which would
 * otherwise cut them mid-job.
 */
export async function startAllWorkers(
  config: Config,
  logger: Logger,
  starters: WorkerStarter[] = EVERY_WORKER,
  stopping?: AbortSignal,
): Promise<RunningWorker> {
  const running: RunningWorker[] = [];
  try {
    for (const start of starters) {
      if (stopping?.aborted) throw new StartCancelledError('the workers to start');
      running.push(await start(config, logger, stopping));
    }
  } catch (err) {
    if (err instanceof StartCancelledError) logger.info(`${err.message}; stopping the workers already started`);
    else logger.error({ err }, 'a worker failed to start; stopping the workers already started');
    await shutdownAll(running);
    throw err;
  }
  return { shutdown: () => shutdownAll(running) };
}
