import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../platform/config/config.js';
import { RateLimitedError, type RateBudget } from '../platform/errors/app-error.js';
import type { RedisClient } from '../platform/queues/redis-connection.js';
import { createRedisLimiter, retryAfterSeconds } from '../platform/throttling/redis-limiter.js';

export type LimitName = 'otpPerUser' | 'otpPerClient' | 'validatePerClient';

/** Where one budget stands after a request: what the RateLimit headers report. */
export interface LimitState {
  name: LimitName;
  /** Requests allowed per window. */
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the window starts over. */
  resetSeconds: number;
}

/** Names the budgets carry in the RateLimit headers (stable: clients may key on them). */
const POLICY_NAMES: Record<LimitName, string> = {
  otpPerUser: 'otp-per-user',
  otpPerClient: 'otp-per-client',
  validatePerClient: 'validate-per-client',
};

/** The OTP budgets under the names the caller is told (the RateLimit headers). */
export function reportedBudgets(states: LimitState[]): RateBudget[] {
  return states.map(({ name, ...rest }) => ({ policy: POLICY_NAMES[name], ...rest }));
}

/**
 * Abuse limits in Redis, shared by every API instance (an in-process limiter with the same budget
 * stands in while Redis is unreachable). A request refused for the caller's own mistake gives its
 * points back (`refund`), so a mistyped template name never uses up a person's budget.
 */
export function createRateLimits(redis: RedisClient, prefix: string, limits: Record<LimitName, RateLimit>) {
  const limiters = Object.fromEntries(
    (Object.keys(limits) as LimitName[]).map((name) => {
      const { points, durationSeconds } = limits[name];
      return [name, createRedisLimiter(redis, `${prefix}:rl:${name}`, points, durationSeconds)];
    }),
  ) as Record<LimitName, RateLimiterRedis>;

  const stateOf = (name: LimitName, res: RateLimiterRes): LimitState => ({
    name,
    quota: limits[name].points,
    windowSeconds: limits[name].durationSeconds,
    remaining: Math.max(res.remainingPoints, 0),
    resetSeconds: Math.max(Math.ceil(res.msBeforeNext / 1000), 0),
  });

  return {
    /** Consumes one point; throws RateLimitedError (with the spent budget) when the budget is spent. */
    async consume(name: LimitName, key: string): Promise<LimitState> {
      try {
        return stateOf(name, await limiters[name].consume(key));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const retryAfter = retryAfterSeconds(err.msBeforeNext);
        throw new RateLimitedError(`Too many requests: retry after ${retryAfter} seconds`, {
          retryAfterSeconds: retryAfter,
          budgets: reportedBudgets([stateOf(name, err)]),
        });
      }
    },

    /** Gives back the point a request took (it was refused for the caller's own mistake). */
    async refund(name: LimitName, key: string): Promise<void> {
      await limiters[name].reward(key, 1);
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
