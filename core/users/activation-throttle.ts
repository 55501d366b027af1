import type { RedisClient } from '../platform/queues/redis-connection.js';
import type { RateLimit } from '../platform/config/config.js';
import { userKey, type UserRef } from '../platform/tenancy/enterprise-id.js';
import { LockedError, RateLimitedError } from '../platform/errors/app-error.js';
import { createBudget } from '../platform/throttling/budget.js';
import { callerBlock } from '../platform/throttling/caller-block.js';
import type { BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { retryAfterSeconds } from '../platform/throttling/redis-limiter.js';

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
function createScope(redis: RedisClient, prefix: string, name: string, free: number, maxDelaySeconds: number, memorySeconds: number) {
  const failures = createBudget(redis, prefix, { name: `${name}:fails`, points: Number.MAX_SAFE_INTEGER, durationSeconds: memorySeconds });
  const gate = createBudget(redis, prefix, { name: `${name}:gate`, points: 1, durationSeconds: maxDelaySeconds });
  const delaySeconds = (attempt: number) => Math.min(2 ** Math.min(attempt - free - 1, 30), maxDelaySeconds);
  return {
    /** Counts this attempt; its number among consecutive attempts. */
    async take(key: string): Promise<number> {
      return (await failures.take(key)).consumed;
    },
    async giveBack(key: string): Promise<void> {
      await failures.refund(key);
    },
    /** Undefined when the attempt may be checked, else how long until it may. */
    async waitFor(key: string, attempt: number): Promise<number | undefined> {
      if (attempt <= free) return undefined;
      const opened = await gate.take(key, { durationSeconds: delaySeconds(attempt) });
      return opened.admitted ? undefined : opened.waitMs;
    },
    async failuresOf(key: string): Promise<number> {
      return failures.peek(key);
    },
    async forget(key: string): Promise<void> {
      await Promise.all([failures.reset(key), gate.reset(key)]);
    },
  };
}

/**
 * Throttling of the public activation route. A stranger who guesses codes for a user slows
 * down their own address first (per user and address), and only after many more failures from
 * everywhere the user as a whole; there is no lock a stranger can set quickly, so the real user
 * with the right code gets in from their own address. After `maxFailures` consecutive failures
 * the code is void until an admin re-issues one. Unknown users are throttled exactly like known
 * ones, so the answers say nothing about whether a user exists. An address is the caller behind
 * it (callerBlock): an IPv6 address counts as its /64, which one host may send from any address
 * of, so a budget per IPv6 address would be a budget per request.
 */
export function createActivationThrottle(redis: RedisClient, prefix: string, config: ActivationThrottleConfig) {
  const perIp = createBudget(redis, prefix, { name: 'activatePerIp', ...config.perIp, policy: ACTIVATION_ADDRESS_POLICY });
  const byAddress = createScope(
    redis,
    prefix,
    'activateUserAddress',
    config.freeFailuresPerAddress,
    config.maxDelayPerAddressSeconds,
    ADDRESS_MEMORY_SECONDS,
  );
  const byUser = createScope(
    redis,
    prefix,
    'activateUser',
    config.freeFailuresPerUser,
    config.maxDelayPerUserSeconds,
    config.codeTtlSeconds,
  );
  const addressKey = (ref: UserRef, ip: string) => `${userKey(ref)}|${callerBlock(ip)}`;

  return {
    maxFailures: config.maxFailures,

    /**
     * One point of the caller address's request budget, and where it stands (the RateLimit
     * headers); 429 when spent. The budgets of a user are never reported: they would tell a
     * stranger about someone else's attempts.
     */
    async consumeIp(ip: string): Promise<BudgetState> {
      return perIp.consume(callerBlock(ip), rateLimited);
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
