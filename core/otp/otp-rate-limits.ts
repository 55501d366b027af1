import type { RedisClient } from '../queues/redis-connection.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../config/config.js';
import { AppError } from '../errors/app-error.js';

export type LimitName = 'otpPerUser' | 'otpPerClient' | 'validatePerClient';

/**
 * Abuse limits in Redis, shared by every API instance. While Redis is unreachable an in-process
 * limiter with the same budget stands in (insurance), so limits still hold per instance.
 */
export function createRateLimits(redis: RedisClient, prefix: string, limits: Record<LimitName, RateLimit>) {
  const limiters = Object.fromEntries(
    (Object.keys(limits) as LimitName[]).map((name) => {
      const { points, durationSeconds } = limits[name];
      const limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}:rl:${name}`,
        points,
        duration: durationSeconds,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: durationSeconds }),
      });
      return [name, limiter];
    }),
  ) as Record<LimitName, RateLimiterRedis>;

  return {
    /** Consumes one point; throws 429 (error body, Retry-After) when the budget is spent. */
    async consume(name: LimitName, key: string): Promise<void> {
      try {
        await limiters[name].consume(key);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const retryAfter = Math.max(Math.ceil(err.msBeforeNext / 1000), 1);
        throw new AppError('RATE_LIMITED', 429, `Too many requests: retry after ${retryAfter} seconds`, {
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
