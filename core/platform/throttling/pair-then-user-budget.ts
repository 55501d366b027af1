import type { RedisClient } from '../queues/redis-connection.js';
import type { RateLimit } from '../config/config.js';
import { createRedisLimiter, takePoint } from './redis-limiter.js';

export interface PairThenUserLimits {
  /** Requests for one user from one address. */
  perPair: RateLimit;
  /** Requests for one user from all addresses the user has not signed in from. */
  perUser: RateLimit;
}

/**
 * A budget per (user, caller address) pair, then one per user. One address asking for a user
 * runs out of its own small budget long before the user's budget; only many addresses together
 * reach the user's, and a request from an address the user is known to use (`familiar`) is
 * never refused by it, so strangers elsewhere cannot lock the real user out of their own
 * address. The user's budget still bounds what strangers can cause in total (messages sent).
 */
export function createPairThenUserBudget(redis: RedisClient, prefix: string, limits: PairThenUserLimits) {
  const perPair = createRedisLimiter(redis, `${prefix}:pair`, limits.perPair.points, limits.perPair.durationSeconds);
  const perUser = createRedisLimiter(redis, `${prefix}:user`, limits.perUser.points, limits.perUser.durationSeconds);
  return {
    /** Takes one request; the wait in milliseconds when refused, else undefined. */
    async take(userKey: string, address: string, familiar: boolean): Promise<number | undefined> {
      const pairWait = await takePoint(perPair, `${userKey}|${address}`);
      if (pairWait !== undefined || familiar) return pairWait;
      const userWait = await takePoint(perUser, userKey);
      // A request the user's budget refused does not use up the pair's either.
      if (userWait !== undefined) await perPair.reward(`${userKey}|${address}`, 1);
      return userWait;
    },

    /** The pair proved itself (the user signed in from there): its budget starts over. */
    async restorePair(userKey: string, address: string): Promise<void> {
      await perPair.delete(`${userKey}|${address}`);
    },
  };
}

export type PairThenUserBudget = ReturnType<typeof createPairThenUserBudget>;
