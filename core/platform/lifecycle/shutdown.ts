import type { Logger } from '../logger/logger.js';

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown>;
  /**
   * Time this step may always take, even when earlier steps used up the overall deadline: a slow
   * drain must not leave the closing of stores 0 ms (they would be cut mid-write).
   */
  minMs?: number;
  /** Called when the step runs out of time, to cut what it was waiting for (for example sockets). */
  abort?: () => void;
}

/** What a step gets at least when it is given no `minMs` of its own. */
export const DEFAULT_STEP_MIN_MS = 2000;

/**
 * Runs shutdown steps in order (stop taking work, drain, close connections). Each is bounded by
 * what is left of one overall deadline, but never by less than its own minimum, so an overrun
 * stretches the shutdown instead of cutting every later step. Safe to call more than once: later
 * calls get the first call's promise. Resolves to true when every step succeeded in time.
 */
export function createShutdown(steps: ShutdownStep[], logger: Logger, deadlineMs: number): () => Promise<boolean> {
  let running: Promise<boolean> | undefined;
  return () => {
    running ??= (async () => {
      const deadline = Date.now() + deadlineMs;
      let ok = true;
      for (const step of steps) {
        const allowedMs = Math.max(deadline - Date.now(), step.minMs ?? DEFAULT_STEP_MIN_MS);
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            step.run(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`${step.name} did not finish within ${allowedMs} ms`)), allowedMs);
            }),
          ]);
          logger.info({ step: step.name }, 'shutdown step done');
        } catch (err) {
          ok = false;
          logger.error({ err, step: step.name }, 'shutdown step failed');
          step.abort?.();
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
    void shutdown()
      .catch(() => false)
      .then((ok) => {
        logger.flush?.();
        process.exitCode = ok ? 0 : 1;
        // Give pino's destination a moment, then exit even if a handle is still open.
        setTimeout(() => process.exit(ok ? 0 : 1), 50).unref();
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
