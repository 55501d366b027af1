/**
 * Work a request leaves running after its answer has gone (a login code is generated and queued
 * only then, so its cost never shows in the answer). The process's shutdown waits for it after
 * the last answer and before closing the stores: closed under it, the work would be lost while
 * the person was told it was done.
 */
export interface WorkAfterAnswers {
  /** Runs `task` now; a failure is the task's own to report (it is not rethrown here). */
  start: (task: () => Promise<void>) => void;
  /** Resolves once every task started so far, and any they started meanwhile, has ended. */
  settled: () => Promise<void>;
}

export function createWorkAfterAnswers(): WorkAfterAnswers {
  const running = new Set<Promise<void>>();
  return {
    start(task) {
      const done: Promise<void> = task()
        .catch(() => undefined)
        .finally(() => running.delete(done));
      running.add(done);
    },
    async settled() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
