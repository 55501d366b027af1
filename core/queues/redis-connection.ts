import { Redis, type RedisOptions } from 'ioredis';

/**
 * Connection for producers on the request path: fails fast instead of queueing commands while
 * Redis is down, so the API answers 503 (or falls back to the sweeper) instead of hanging.
 */
export function createProducerRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}

/** Connection for BullMQ workers: blocking commands must be retried forever (BullMQ's requirement). */
export function createWorkerRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}

export async function pingRedis(redis: Redis, timeoutMs = 1000): Promise<void> {
  if (redis.status !== 'ready') throw new Error(`Redis is ${redis.status}`);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('Redis ping timed out')), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits (bounded) for the first connection, so a healthy start reports ready at once; a Redis
 * that is down at boot does not stop the process (readiness reports it, the sweeper catches up).
 */
export async function waitForRedis(redis: Redis, timeoutMs = 5000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
