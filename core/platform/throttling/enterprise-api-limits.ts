import type { RateLimit } from '../config/config.js';
import { RateLimitedError } from '../errors/app-error.js';
import type { RedisClient } from '../queues/redis-connection.js';
import { createBudget, type Budget } from './budget.js';
import type { BudgetState } from './rate-limit-headers.js';
import { retryAfterSeconds } from './redis-limiter.js';

export type LimitName =
  | 'otpPerUser'
  | 'otpPerClient'
  | 'otpPerEnterprise'
  | 'validatePerClient'
  | 'notificationsPerUser'
  | 'notificationsPerClient'
  | 'notificationsPerEnterprise'
  | 'enrollmentMessagesPerClient'
  | 'enrollmentMessagesPerEnterprise';

/** Names the budgets carry in the RateLimit headers (stable: clients may key on them). */
const POLICY_NAMES: Record<LimitName, string> = {
  otpPerUser: 'otp-per-user',
  otpPerClient: 'otp-per-client',
  otpPerEnterprise: 'otp-per-enterprise',
  validatePerClient: 'validate-per-client',
  notificationsPerUser: 'notifications-per-user',
  notificationsPerClient: 'notifications-per-client',
  notificationsPerEnterprise: 'notifications-per-enterprise',
  enrollmentMessagesPerClient: 'enrollment-messages-per-client',
  enrollmentMessagesPerEnterprise: 'enrollment-messages-per-enterprise',
};

/** Budgets of a person: test clients' traffic counts against budgets of its own there. */
const PER_USER: readonly LimitName[] = ['otpPerUser', 'notificationsPerUser'];

const tooMany = (msBeforeNext: number, budget: BudgetState) => {
  const retryAfter = retryAfterSeconds(msBeforeNext);
  return new RateLimitedError(`Too many requests: retry after ${retryAfter} seconds`, { retryAfterSeconds: retryAfter, budgets: [budget] });
};

/**
 * Abuse limits of the enterprise API (OTPs, their validations, approval notifications, enrollments that send a code) in Redis, shared by every API instance (an in-process limiter with the same budget
 * stands in while Redis is unreachable). A request refused for the caller's own mistake gives its
 * points back (`refund`), so a mistyped template name never uses up a person's budget. Test
 * clients' traffic counts against a per-user budget of its own.
 */
export function createEnterpriseApiLimits(redis: RedisClient, prefix: string, limits: Record<LimitName, RateLimit>) {
  const budgets = Object.fromEntries(
    (Object.keys(limits) as LimitName[]).map((name) => [
      name,
      createBudget(redis, prefix, { name, ...limits[name], policy: POLICY_NAMES[name], separateTestTraffic: PER_USER.includes(name) }),
    ]),
  ) as Record<LimitName, Budget>;

  return {
    /** Consumes one point; throws RateLimitedError (the wait, and the spent budget) when the budget is spent. */
    async consume(name: LimitName, key: string, test = false): Promise<BudgetState> {
      return budgets[name].consume(key, tooMany, { test });
    },

    /** Gives back the point a request took (it was refused for the caller's own mistake). */
    async refund(name: LimitName, key: string, test = false): Promise<void> {
      await budgets[name].refund(key, { test });
    },
  };
}

export type EnterpriseApiLimits = ReturnType<typeof createEnterpriseApiLimits>;
