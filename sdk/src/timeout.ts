// A request that never answers must end as a `network` failure the app can retry, not hang.
// AbortController and setTimeout exist in browsers, Node and React Native (AbortSignal.timeout
// does not everywhere).

export const DEFAULT_TIMEOUT_MS = 30_000;

/** A signal that aborts after `ms`; `done` clears the timer once the request is over. */
export function timeoutSignal(ms: number): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError(ms)), ms);
  return { signal: controller.signal, done: () => clearTimeout(timer) };
}

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

export function checkTimeout(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(ms) || ms <= 0) throw new TypeError('timeoutMs must be a positive number of milliseconds');
  return ms;
}
