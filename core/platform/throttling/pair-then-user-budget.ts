import type { RedisClient } from '../queues/redis-connection.js';
import type { RateLimit } from '../config/config.js';
import { createBudget } from './budget.js';

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
 * `address` is taken as given: pass the caller's block (callerBlock), not a raw IPv6 address,
 * or one host gets a pair budget for every address of its /64.
 */
export function createPairThenUserBudget(redis: RedisClient, prefix: string, name: string, limits: PairThenUserLimits) {
  const perPair = createBudget(redis, prefix, { name: `${name}:pair`, ...limits.perPair });
  const perUser = createBudget(redis, prefix, { name: `${name}:user`, ...limits.perUser });
  return {
    /** Takes one request; the wait in milliseconds when refused, else undefined. */
    async take(userKey: string, address: string, familiar: boolean): Promise<number | undefined> {
      const pair = await perPair.take(`${userKey}|${address}`);
      if (!pair.admitted) return pair.waitMs;
      if (familiar) return undefined;
      const user = await perUser.take(userKey);
      if (user.admitted) return undefined;
      // A request the user's budget refused does not use up the pair's either.
      await perPair.refund(`${userKey}|${address}`);
      return user.waitMs;
    },

    /** The pair proved itself (the user signed in from there): its budget starts over. */
    async restorePair(userKey: string, address: string): Promise<void> {
      await perPair.reset(`${userKey}|${address}`);
    },
  };
}

export type PairThenUserBudget = ReturnType<typeof createPairThenUserBudget>;
