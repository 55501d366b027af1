import type { RedisClient } from '../platform/queues/redis-connection.js';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../platform/config/config.js';
import { userKey, type UserRef } from '../platform/tenancy/enterprise-id.js';
import { LockedError, RateLimitedError } from '../platform/errors/app-error.js';
import { budgetState, type BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { createRedisLimiter as limiter, retryAfterSeconds } from '../platform/throttling/redis-limiter.js';

export interface ActivationThrottleConfig {
  /** Requests per caller address over all users: a cheap flood guard. */
  perIp: RateLimit;
  /** Consecutive failed checks of one user's code after which the code is void (NIST 800-63B: at most 100). */
  maxFailures: number;
  /** Consecutive failures of one user from one address before that address must wait. */
  freeFailuresPerAddress: number;
  /** Consecutive failures of one user from all addresses before every address must wait. */
  freeFailuresPerUser: number;
  maxDelayPerAddressSeconds: number;
  maxDelayPerUserSeconds: number;
  codeTtlSeconds: number;
}

const ADDRESS_MEMORY_SECONDS = 24 * 3600;

export const rateLimited = (msBeforeNext: number, budget?: BudgetState) => {
  const retryAfter = retryAfterSeconds(msBeforeNext);
  return new RateLimitedError(`Too many requests: retry after ${retryAfter} seconds`, {
    retryAfterSeconds: retryAfter,
    budgets: budget ? [budget] : [],
  });
};

/** The name of the caller address's activation budget in the RateLimit headers. */
export const ACTIVATION_ADDRESS_POLICY = 'activation-per-address';

export const activationLocked = () =>
  new LockedError('ACTIVATION_LOCKED', 'Too many wrong activation codes; ask for a new activation code');

/**
 * One scope of the throttle (a user, or a user seen from one address): a counter of
 * consecutive failed checks and a gate. The first `free` checks pass at once; each later check
 * must find the gate open and closes it for 1, 2, 4 ... seconds (at most `maxDelay`). The
 * counter is taken before the check (atomic in Redis, so a burst of parallel guesses gets no
 * more checks than a sequence would) and given back when the gate refuses.
 */
function createScope(redis: RedisClient, prefix: string, free: number, maxDelaySeconds: number, memorySeconds: number) {
  const failures = limiter(redis, `${prefix}:fails`, Number.MAX_SAFE_INTEGER, memorySeconds);
  const gate = limiter(redis, `${prefix}:gate`, 1, maxDelaySeconds);
  const delaySeconds = (attempt: number) => Math.min(2 ** Math.min(attempt - free - 1, 30), maxDelaySeconds);
  return {
    /** Counts this attempt; its number among consecutive attempts. */
    async take(key: string): Promise<number> {
      return (await failures.consume(key)).consumedPoints;
    },
    async giveBack(key: string): Promise<void> {
      await failures.reward(key, 1);
    },
    /** Undefined when the attempt may be checked, else how long until it may. */
    async waitFor(key: string, attempt: number): Promise<number | undefined> {
      if (attempt <= free) return undefined;
      try {
        await gate.consume(key, 1, { customDuration: delaySeconds(attempt) });
        return undefined;
      } catch (err) {
        if (err instanceof RateLimiterRes) return err.msBeforeNext;
        throw err;
      }
    },
    async failuresOf(key: string): Promise<number> {
      return (await failures.get(key))?.consumedPoints ?? 0;
    },
    async forget(key: string): Promise<void> {
      await Promise.all([failures.delete(key), gate.delete(key)]);
    },
  };
}

/**
 * Throttling of the public activation route. A stranger who guesses codes for a user slows
 * down their own address first (per user and address), and only after many more failures from
 * everywhere the user as a whole; there is no lock a stranger can set quickly, so the real user
 * with the right code gets in from their own address. After `maxFailures` consecutive failures
 * the code is void until an admin re-issues one. Unknown users are throttled exactly like known
 * ones, so the answers say nothing about whether a user exists.
 */
export function createActivationThrottle(redis: RedisClient, prefix: string, config: ActivationThrottleConfig) {
  const perIp = limiter(redis, `${prefix}:rl:activatePerIp`, config.perIp.points, config.perIp.durationSeconds);
  const byAddress = createScope(
    redis,
    `${prefix}:rl:activateUserAddress`,
    config.freeFailuresPerAddress,
    config.maxDelayPerAddressSeconds,
    ADDRESS_MEMORY_SECONDS,
  );
  const byUser = createScope(
    redis,
    `${prefix}:rl:activateUser`,
    config.freeFailuresPerUser,
    config.maxDelayPerUserSeconds,
    config.codeTtlSeconds,
  );
  const addressKey = (ref: UserRef, ip: string) => `${userKey(ref)}|${ip}`;

  return {
    maxFailures: config.maxFailures,

    /**
     * One point of the caller address's request budget, and where it stands (the RateLimit
     * headers); 429 when spent. The budgets of a user are never reported: they would tell a
     * stranger about someone else's attempts.
     */
    async consumeIp(ip: string): Promise<BudgetState> {
      const { points, durationSeconds } = config.perIp;
      try {
        return budgetState(ACTIVATION_ADDRESS_POLICY, points, durationSeconds, await perIp.consume(ip));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        throw rateLimited(err.msBeforeNext, budgetState(ACTIVATION_ADDRESS_POLICY, points, durationSeconds, err));
      }
    },

    /**
     * Admits one check of a code for this user from this address, or throws 429 (wait, with
     * Retry-After) or 423 (the code is void). Returns the attempt's number among the user's
     * consecutive attempts.
     */
    async admit(ref: UserRef, ip: string): Promise<number> {
      const aKey = addressKey(ref, ip);
      const uKey = userKey(ref);
      const [fromAddress, overall] = await Promise.all([byAddress.take(aKey), byUser.take(uKey)]);
      const giveBack = () => Promise.all([byAddress.giveBack(aKey), byUser.giveBack(uKey)]);
      if (overall > config.maxFailures) {
        await giveBack();
        throw activationLocked();
      }
      const [addressWait, userWait] = await Promise.all([byAddress.waitFor(aKey, fromAddress), byUser.waitFor(uKey, overall)]);
      if (addressWait !== undefined || userWait !== undefined) {
        await giveBack();
        throw rateLimited(Math.max(addressWait ?? 0, userWait ?? 0));
      }
      return overall;
    },

    /** The right code: the user's counters start over (the address's too). */
    async succeeded(ref: UserRef, ip: string): Promise<void> {
      await Promise.all([byUser.forget(userKey(ref)), byAddress.forget(addressKey(ref, ip))]);
    },

    /** A new code was issued: the user's consecutive failures start over. */
    async reset(ref: UserRef): Promise<void> {
      await byUser.forget(userKey(ref));
    },

    /** Checks left before the code is void. */
    async attemptsLeft(ref: UserRef): Promise<number> {
      return Math.max(config.maxFailures - (await byUser.failuresOf(userKey(ref))), 0);
    },
  };
}

export type ActivationThrottle = ReturnType<typeof createActivationThrottle>;
