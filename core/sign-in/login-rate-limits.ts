import type { RedisClient } from '../platform/queues/redis-connection.js';
import type { RateLimit } from '../platform/config/config.js';
import { RateLimitedError } from '../platform/errors/app-error.js';
import { createBudget } from '../platform/throttling/budget.js';
import { callerBlock } from '../platform/throttling/caller-block.js';
import { createPairThenUserBudget } from '../platform/throttling/pair-then-user-budget.js';
import type { BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { retryAfterSeconds } from '../platform/throttling/redis-limiter.js';

export interface LoginLimitsConfig {
  /** Every form post per caller address, whatever the user: a flood guard. */
  perIp: RateLimit;
  /** Steps (user id, code, new code) for one user from one address. */
  perUserAddress: RateLimit;
  /** Steps for one user from every address it has not signed in from. */
  perUser: RateLimit;
  /** Codes sent for one user at the request of one address. */
  codesPerUserAddress: RateLimit;
  /** Codes sent for one user at the request of every address it has not signed in from. */
  codesPerUser: RateLimit;
  /** An address the user signed in from is remembered this long as theirs. */
  familiarAddressSeconds: number;
}

/** The sign-in pages' 429: the wait, in the words every sign-in refusal uses. */
export const tooManySignInAttempts = (msBeforeNext: number, budget?: BudgetState) => {
  const retryAfter = retryAfterSeconds(msBeforeNext);
  return new RateLimitedError(`Too many attempts. Try again in ${retryAfter} seconds.`, {
    retryAfterSeconds: retryAfter,
    budgets: budget ? [budget] : [],
  });
};

/** The name of the caller address's sign-in budget in the RateLimit headers. */
export const SIGN_IN_ADDRESS_POLICY = 'sign-in-per-address';

/**
 * Abuse limits of the sign-in pages, in Redis so every API instance shares them. Steps and codes
 * are budgeted per (user, address) pair first and per user only after that, and never per user
 * for an address the user signed in from before: a stranger posting someone's user id uses up
 * their own address's budget, not the person's (who can always sign in from their usual
 * address), while the messages strangers can cause stay bounded by the per-user code budget.
 *
 * "Address" means the caller behind it (callerBlock): an IPv6 address counts as its /64, for the
 * budgets and for the addresses a user signed in from alike. One host may send from any address
 * of its /64, so budgets per IPv6 address would be budgets per request; and a person's own
 * device moves within its /64 (a new privacy address every day or so), so a /64 they signed in
 * from stays theirs, as an IPv4 address behind a home router does.
 */
export function createLoginLimits(redis: RedisClient, prefix: string, config: LoginLimitsConfig) {
  const perIp = createBudget(redis, prefix, { name: 'login:perIp', ...config.perIp, policy: SIGN_IN_ADDRESS_POLICY });
  const steps = createPairThenUserBudget(redis, prefix, 'login:steps', { perPair: config.perUserAddress, perUser: config.perUser });
  const codes = createPairThenUserBudget(redis, prefix, 'login:codes', {
    perPair: config.codesPerUserAddress,
    perUser: config.codesPerUser,
  });
  // Next to the budgets' keys (`<prefix>:rl:login:...`), though not a budget itself.
  const familiarKey = (userKey: string, caller: string) => `${prefix}:rl:login:familiar:${userKey}|${caller}`;

  /** Unknown while Redis is unreachable: then the caller counts as a stranger. */
  async function isFamiliar(userKey: string, caller: string): Promise<boolean> {
    try {
      return (await redis.exists(familiarKey(userKey, caller))) === 1;
    } catch {
      return false;
    }
  }

  return {
    /**
     * One form post of this address, and where its budget stands (the RateLimit headers); 429
     * with Retry-After when it is spent. The budgets that involve a user id are never reported:
     * they would tell a stranger about someone else's sign-ins.
     */
    async consumeIp(address: string): Promise<BudgetState> {
      return perIp.consume(callerBlock(address), tooManySignInAttempts);
    },

    /** One step for this user from this address (and a code to send, when `sendsCode`); 429 when refused. */
    async consumeStep(userKey: string, address: string, sendsCode: boolean): Promise<void> {
      const caller = callerBlock(address);
      const familiar = await isFamiliar(userKey, caller);
      const stepWait = await steps.take(userKey, caller, familiar);
      if (stepWait !== undefined) throw tooManySignInAttempts(stepWait);
      if (!sendsCode) return;
      const codeWait = await codes.take(userKey, caller, familiar);
      if (codeWait !== undefined) throw tooManySignInAttempts(codeWait);
    },

    /**
     * The user signed in from this address: it is theirs from now on, and its budgets start over
     * (someone signing in several times in a row is not refused for it).
     */
    async rememberAddress(userKey: string, address: string): Promise<void> {
      const caller = callerBlock(address);
      await Promise.all([
        redis.set(familiarKey(userKey, caller), '1', 'EX', config.familiarAddressSeconds),
        steps.restorePair(userKey, caller),
        codes.restorePair(userKey, caller),
      ]);
    },
  };
}

export type LoginLimits = ReturnType<typeof createLoginLimits>;
