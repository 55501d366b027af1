import type { RedisClient } from '../queues/redis-connection.js';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

/**
 * A counter in Redis, shared by every API instance: `points` per `durationSeconds` under one
 * key prefix. While Redis is unreachable an in-process limiter with the same budget stands in,
 * so an outage never lifts the limits. Features declare budgets (budget.ts) instead.
 */
export function createRedisLimiter(redis: RedisClient, keyPrefix: string, points: number, durationSeconds: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: durationSeconds,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points, duration: durationSeconds }),
  });
}

/** Whole seconds to wait, at least 1 (a Retry-After of 0 invites an immediate retry). */
export const retryAfterSeconds = (msBeforeNext: number): number => Math.max(Math.ceil(msBeforeNext / 1000), 1);
