/**
 * Waiting in tests: on the state a test needs, never for a fixed time (a fixed sleep is too short
 * on a busy machine and too long everywhere else). Both helpers are bounded, so a test never hangs.
 */

/** Polls until `check` returns a value (bounded: tests never hang on a lost message). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Waits until the real clock reads `at` (ms since the epoch), to within a millisecond. Only for a
 * test that races another process's real clock on purpose (answers arriving around an expiry
 * that a worker process enforces on its own clock): there the instant is the state waited on.
 */
export async function untilClockReaches(at: number, timeoutMs = 15000): Promise<void> {
  if (at - Date.now() > timeoutMs) throw new Error(`${at} is more than ${timeoutMs} ms away`);
  while (Date.now() < at) await new Promise((resolve) => setTimeout(resolve, Math.min(at - Date.now(), 1)));
}
