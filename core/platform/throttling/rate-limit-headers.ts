import type { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateBudget } from '../errors/app-error.js';

/** Where one budget stands after a request: what the RateLimit headers report (api/errors/rate-limit-headers.ts). */
export type BudgetState = RateBudget;

/** A budget's state from the limiter's answer (a consumed point, or the refusal). */
export function budgetState(policy: string, quota: number, windowSeconds: number, res: RateLimiterRes): BudgetState {
  return {
    policy,
    quota,
    windowSeconds,
    remaining: Math.max(res.remainingPoints, 0),
    resetSeconds: Math.max(Math.ceil(res.msBeforeNext / 1000), 0),
  };
}
