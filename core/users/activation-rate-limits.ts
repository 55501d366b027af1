import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { MAX_ACTIVATION_ATTEMPTS } from './user.types.js';

const limiter = (redis: Redis, keyPrefix: string, points: number, duration: number) =>
  new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration,
    rejectIfRedisNotReady: true,
    // While Redis is unreachable an in-process limiter with the same budget stands in.
    insuranceLimiter: new RateLimiterMemory({ points, duration }),
  });

export interface ActivationLimitsConfig {
  perUser: RateLimit;
  perIp: RateLimit;
  codeTtlSeconds: number;
}

/**
 * Abuse limits of the public activation route (per userId and per caller address), and the
 * attempt counter of userIds that have nothing to activate: those answer like a wrong code,
 * with attempts counting down to a lock, so callers cannot tell them from real users.
 */
const PHANTOM_LOCK_SECONDS = 90 * 24 * 3600;

export function createActivationLimits(redis: Redis, prefix: string, config: ActivationLimitsConfig) {
  const perUser = limiter(redis, `${prefix}:rl:activatePerUser`, config.perUser.points, config.perUser.durationSeconds);
  const perIp = limiter(redis, `${prefix}:rl:activatePerIp`, config.perIp.points, config.perIp.durationSeconds);
  // A real user's lock lasts until an admin re-issues a code; a phantom lock that ended with the
  // code lifetime would tell the two apart, so it lasts far longer.
  const phantom = limiter(redis, `${prefix}:rl:activatePhantom`, MAX_ACTIVATION_ATTEMPTS, Math.max(config.codeTtlSeconds, PHANTOM_LOCK_SECONDS));

  async function consume(rl: RateLimiterRedis, key: string): Promise<void> {
    try {
      await rl.consume(key);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(Math.ceil(err.msBeforeNext / 1000), 1);
      throw new AppError('RATE_LIMITED', 429, `Too many requests: retry after ${retryAfter} seconds`, { headers: { 'Retry-After': String(retryAfter) } });
    }
  }

  return {
    consumeUser: (userId: string) => consume(perUser, userId),
    consumeIp: (ip: string) => consume(perIp, ip),
    /** Attempts left after this one, or 'LOCKED' once the phantom budget is spent. */
    async phantomAttempt(userId: string): Promise<number | 'LOCKED'> {
      try {
        return (await phantom.consume(userId)).remainingPoints;
      } catch (err) {
        if (err instanceof RateLimiterRes) return 'LOCKED';
        throw err;
      }
    },
  };
}

export type ActivationLimits = ReturnType<typeof createActivationLimits>;
