import type { Logger } from '../logger/logger.js';

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown>;
}

/**
 * Runs shutdown steps in order (stop taking work, drain, close connections), each bounded by
 * what is left of one overall deadline. Safe to call more than once: later calls get the first
 * call's promise. Resolves to true when every step succeeded in time.
 */
export function createShutdown(steps: ShutdownStep[], logger: Logger, deadlineMs: number): () => Promise<boolean> {
  let running: Promise<boolean> | undefined;
  return () => {
    running ??= (async () => {
      const deadline = Date.now() + deadlineMs;
      let ok = true;
      for (const step of steps) {
        const left = Math.max(deadline - Date.now(), 0);
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            step.run(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`${step.name} did not finish before the shutdown deadline`)), left);
            }),
          ]);
          logger.info({ step: step.name }, 'shutdown step done');
        } catch (err) {
          ok = false;
          logger.error({ err, step: step.name }, 'shutdown step failed');
        } finally {
          clearTimeout(timer);
        }
      }
      return ok;
    })();
    return running;
  };
}

/**
 * Wires SIGTERM/SIGINT to the shutdown: the first signal starts it, later ones are ignored;
 * the process exits 0 when every step succeeded, 1 otherwise, after logs are flushed.
 */
export function exitOnSignals(shutdown: () => Promise<boolean>, logger: Logger): void {
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      logger.warn({ signal }, 'shutdown already in progress');
      return;
    }
    started = true;
    logger.info({ signal }, 'shutting down');
    void shutdown().then((ok) => {
      logger.flush?.();
      process.exitCode = ok ? 0 : 1;
      // Give pino's destination a moment, then exit even if a handle is still open.
      setTimeout(() => process.exit(ok ? 0 : 1), 50).unref();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
