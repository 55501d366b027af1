import type { RedisClient } from '../queues/redis-connection.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../config/config.js';
import { AppError } from '../errors/app-error.js';

export interface LoginLimitsConfig {
  perIp: RateLimit;
  perUser: RateLimit;
  codesPerUser: RateLimit;
}

export type LoginLimitName = keyof LoginLimitsConfig;

/**
 * Abuse limits of the sign-in pages, in Redis so every API instance shares them: every step per
 * caller address and per user id, and codes sent per user id (a "send a new code" flood would
 * otherwise spam a user's phone). While Redis is unreachable an in-process limiter with the
 * same budget stands in.
 */
export function createLoginLimits(redis: RedisClient, prefix: string, config: LoginLimitsConfig) {
  const limiters = Object.fromEntries(
    (Object.keys(config) as LoginLimitName[]).map((name) => {
      const { points, durationSeconds } = config[name];
      const limiter = new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}:rl:login:${name}`,
        points,
        duration: durationSeconds,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: durationSeconds }),
      });
      return [name, limiter];
    }),
  ) as Record<LoginLimitName, RateLimiterRedis>;

  return {
    /** Consumes one point; throws 429 with Retry-After when the budget is spent. */
    async consume(name: LoginLimitName, key: string): Promise<void> {
      try {
        await limiters[name].consume(key);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const retryAfter = Math.max(Math.ceil(err.msBeforeNext / 1000), 1);
        throw new AppError('RATE_LIMITED', 429, `Too many attempts. Try again in ${retryAfter} seconds.`, {
          headers: { 'Retry-After': String(retryAfter) },
        });
      }
    },
  };
}

export type LoginLimits = ReturnType<typeof createLoginLimits>;
