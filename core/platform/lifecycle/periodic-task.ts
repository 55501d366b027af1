import type { Logger } from '../logger/logger.js';

/** Runs `task` every `intervalMs` until stopped; a run never overlaps the previous one. */
export function startPeriodicTask(
  name: string,
  task: () => Promise<unknown>,
  intervalMs: number,
  logger: Logger,
): { stop: () => Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(() =>
      stopped ? undefined : task().catch((err: unknown) => logger.error({ err, task: name }, 'periodic task failed')),
    );
  }, intervalMs);
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
