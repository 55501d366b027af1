/**
 * A start given up because the process was told to stop (SIGTERM, SIGINT) while it waited for
 * a store that may take any time to come (Redis, which workers wait for without limit). Nothing
 * had taken work yet, so the process stops as if it had never started: exit 0, not a failure.
 */
export class StartCancelledError extends Error {
  constructor(waitingFor: string) {
    super(`start given up: the process was told to stop while it waited for ${waitingFor}`);
    this.name = 'StartCancelledError';
  }
}

/**
 * What `promise` gives, unless `signal` aborts first: then StartCancelledError at once, and the
 * caller releases what it was waiting on (the promise itself is left to settle unheard).
 */
export function unlessStopped<T>(promise: Promise<T>, signal: AbortSignal | undefined, waitingFor: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new StartCancelledError(waitingFor));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StartCancelledError(waitingFor));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
