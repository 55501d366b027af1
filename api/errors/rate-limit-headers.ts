import type { RateBudget } from '../../core/platform/errors/app-error.js';

/**
 * `RateLimit-Policy` and `RateLimit` (IETF httpapi RateLimit header fields, structured-field
 * lists): each budget the request used, its quota and window, what is left and when it resets.
 * Sent on admitted requests by the routes and on refusals by the error edge.
 */
export function rateLimitHeaders(states: readonly RateBudget[]): Record<string, string> {
  if (states.length === 0) return {};
  return {
    'RateLimit-Policy': states.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowSeconds}`).join(', '),
    RateLimit: states.map((s) => `"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`).join(', '),
  };
}
