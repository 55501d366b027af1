import type { Config } from '../core/platform/config/config.js';
import type { RunningWorker } from '../core/platform/lifecycle/worker-lifecycle.js';
import type { Logger } from '../core/platform/logger/logger.js';
import { startDispatchWorker } from './dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from './enrollment/enrollment-worker.js';
import { startNotificationWorker } from './notifications/notification-worker.js';

/**
 * Runs every worker in this process (for `npm start`); production runs each worker's own
 * main.ts as a separate Procfile process instead.
 */
export async function startAllWorkers(config: Config, logger: Logger): Promise<RunningWorker> {
  const running: RunningWorker[] = [
    await startDispatchWorker(config, logger),
    await startEnrollmentWorker(config, logger),
    await startNotificationWorker(config, logger),
  ];
  return {
    shutdown: async () => (await Promise.all(running.map((w) => w.shutdown()))).every(Boolean),
  };
}
