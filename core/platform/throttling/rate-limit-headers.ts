import type { RateLimiterRes } from 'rate-limiter-flexible';

/** Where one budget stands after a request: what the RateLimit headers report. */
export interface BudgetState {
  /** The budget's name in the headers (stable: clients may key on it). */
  policy: string;
  /** Requests allowed per window. */
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the window starts over. */
  resetSeconds: number;
}

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

/**
 * `RateLimit-Policy` and `RateLimit` (IETF httpapi RateLimit header fields, structured-field
 * lists): each budget the request used, its quota and window, what is left and when it resets.
 */
export function rateLimitHeaders(states: BudgetState[]): Record<string, string> {
  if (states.length === 0) return {};
  return {
    'RateLimit-Policy': states.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowSeconds}`).join(', '),
    RateLimit: states.map((s) => `"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`).join(', '),
  };
}
