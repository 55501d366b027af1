import type { RedisClient } from '../platform/queues/redis-connection.js';
import type { RateLimit } from '../platform/config/config.js';
import type { RateLimitedError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import { callerBlock } from '../platform/throttling/caller-block.js';
import { createFailureBudget } from '../platform/throttling/failure-budget.js';
import { retryAfterSeconds } from '../platform/throttling/redis-limiter.js';
import { tooManySignInAttempts } from './login-rate-limits.js';

/**
 * The budget of sign-in pages an address may open: every authorization request that starts a
 * sign-in (the provider stores an interaction for it, until its TTL) and every load of a sign-in
 * page (a read of that interaction and of the sign-in's state), and every session the sign-out page
 * stores for its form (for a caller without one too). Those requests name no user, so
 * the budgets of login-rate-limits.ts never see them; without this one address could make the
 * service write and read its stores at will.
 *
 * Only what was done is counted, and whether an address may go on is answered from this
 * process's memory of the addresses it saw spend their budget (failure-budget.ts): a request
 * under budget waits for no Redis call before its work, and the count runs beside the store
 * write or read it stands for. The price: a process learns that an address spent its budget
 * elsewhere at the address's first request there (which is served; the next one is refused).
 */
export function createSignInStartLimits(redis: RedisClient, prefix: string, perIp: RateLimit, logger: Logger) {
  const budget = createFailureBudget(redis, prefix, { name: 'login:startsPerIp', ...perIp, policy: 'sign-in-starts-per-address' });

  return {
    /** True when this process knows of no spent budget: nothing to look up before a page. */
    isQuiet: (): boolean => budget.isQuiet(),

    /** The 429 for this address when its budget is spent, as far as this process knows (no Redis call). */
    refusal(address: string): RateLimitedError | undefined {
      if (budget.isQuiet()) return undefined;
      const waitMs = budget.waitMs(callerBlock(address));
      return waitMs > 0 ? tooManySignInAttempts(waitMs) : undefined;
    },

    /**
     * Counts one sign-in started or page opened by this address. Never fails the request: while
     * Redis is unreachable the budget's in-process stand-in counts, and anything else is logged.
     */
    async count(address: string): Promise<void> {
      const caller = callerBlock(address);
      const counted = await budget.countFailure(caller).catch((err: unknown) => {
        logger.error({ err }, 'a sign-in page could not be counted against its address');
        return undefined;
      });
      // Once per window and process, when this count spent the budget: which address to look at
      // (an office behind one NAT that needs a larger budget, or a flood).
      if (counted && counted.waitMs > 0 && !counted.refused) {
        logger.warn(
          { address: caller, retryAfterSeconds: retryAfterSeconds(counted.waitMs) },
          'too many sign-ins started or sign-in pages loaded from this address: refused until the window ends',
        );
      }
    },
  };
}

export type SignInStartLimits = ReturnType<typeof createSignInStartLimits>;
