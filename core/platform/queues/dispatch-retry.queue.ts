import type { RedisClient } from './redis-connection.js';
import type { Logger } from '../logger/logger.js';

export interface DispatchRetryOptions {
  /** The request path's enqueue (batched, may carry the sealed row and a priority: dispatch-fairness.ts). */
  enqueue: (deliveryId: string, sealed?: string, priority?: number) => Promise<void>;
  /** The retry's enqueue: by delivery id only (see below). */
  enqueueById: (deliveryId: string) => Promise<void>;
  /** The producer connection: its `ready` event starts a retry at once. */
  redis: RedisClient;
  logger: Logger;
  /** Deliveries held for retry at most; beyond that they are left to the sweeper. */
  maxPending?: number;
}

export interface DispatchRetry {
  /**
   * Enqueues now; when Redis refuses, holds the delivery for retry and resolves anyway. Rejects
   * only when the retry queue is full (the row then waits for the sweeper).
   */
  enqueue: (deliveryId: string, sealed?: string, priority?: number) => Promise<void>;
  pending: () => number;
  /** One last bounded attempt for what is held; the rest is left to the sweeper. */
  close: (timeoutMs: number) => Promise<void>;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2000;
const RETRY_BATCH = 500;
const DEFAULT_MAX_PENDING = 20_000;

/**
 * Deliveries the API accepted while Redis was unreachable go out as soon as Redis answers again,
 * instead of waiting for the sweeper's grace period (a minute) and its pass size. Retries start
 * on the connection's `ready` event and otherwise back off (250 ms doubling to 2 s). The sweeper
 * stays the safety net: a held delivery is also a QUEUED row, so a crash of this process or a
 * full queue loses nothing.
 *
 * Retries go by delivery id without the sealed row: by then the sweeper may have queued and sent
 * the same delivery (its job already removed), and only a job that reads the row skips it.
 */
export function createDispatchRetry(options: DispatchRetryOptions): DispatchRetry {
  const held = new Set<string>();
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  let delayMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let recovered = 0;

  function schedule(ms: number): void {
    if (closed || held.size === 0 || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void retry();
    }, ms);
    timer.unref();
  }

  async function retryOnce(): Promise<boolean> {
    if (options.redis.status !== 'ready') return false;
    const batch = [...held].slice(0, RETRY_BATCH);
    const results = await Promise.allSettled(batch.map((id) => options.enqueueById(id)));
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        held.delete(batch[i] as string);
        recovered += 1;
      }
    });
    return results.every((result) => result.status === 'fulfilled');
  }

  let busy = false;
  async function retry(): Promise<void> {
    if (busy) return;
    busy = true;
    try {
      while (held.size > 0 && !closed) {
        if (!(await retryOnce().catch(() => false))) {
          schedule(delayMs);
          delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
          return;
        }
      }
      if (recovered > 0) options.logger.info({ enqueued: recovered }, 'held dispatch jobs enqueued');
      recovered = 0;
      delayMs = FIRST_RETRY_MS;
    } finally {
      busy = false;
    }
  }

  const onReady = () => {
    clearTimeout(timer);
    timer = undefined;
    delayMs = FIRST_RETRY_MS;
    void retry();
  };
  options.redis.on('ready', onReady);

  return {
    // A held delivery is retried without its priority: late already, it goes first.
    enqueue: async (deliveryId, sealed, priority) => {
      try {
        await options.enqueue(deliveryId, sealed, priority);
      } catch (err) {
        if (closed || held.size >= maxPending) throw err;
        if (held.size === 0)
          options.logger.warn({ err: (err as Error).message }, 'dispatch enqueue failed; holding deliveries to retry when Redis answers');
        held.add(deliveryId);
        schedule(delayMs);
      }
    },
    pending: () => held.size,
    close: async (timeoutMs) => {
      options.redis.off('ready', onReady);
      clearTimeout(timer);
      timer = undefined;
      if (held.size > 0) {
        let bound: NodeJS.Timeout | undefined;
        await Promise.race([retryOnce().catch(() => false), new Promise((resolve) => (bound = setTimeout(resolve, timeoutMs)))]);
        clearTimeout(bound);
      }
      closed = true;
      if (held.size > 0) options.logger.warn({ left: held.size }, 'held dispatch jobs left to the sweeper');
    },
  };
}
