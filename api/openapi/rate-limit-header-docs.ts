// How the limited routes document the budgets' header fields (IETF draft-ietf-httpapi-ratelimit-headers)
// and Retry-After, so a client generated from the document knows they are there.

const text = { type: 'string' };

/** On an answer that took from `budgets` (their names, comma-separated): where each stands. */
export function rateLimitHeaders(budgets: string) {
  return {
    'RateLimit-Policy': {
      description: `The budgets the request took from (${budgets}), each \`"<name>";q=<quota>;w=<window seconds>\`, comma-separated; a 429 names only the spent one`,
      schema: text,
    },
    RateLimit: {
      description:
        'Where each of those budgets stands, `"<name>";r=<requests left>;t=<seconds until the window starts over>`; `r=0` for the spent one on a 429',
      schema: text,
    },
  };
}

/** On a 429: the spent budget, and when to try again. */
export function rateLimitedHeaders(budgets: string) {
  return {
    ...rateLimitHeaders(budgets),
    'Retry-After': { description: 'Seconds until the spent budget has room again', schema: { type: 'integer', minimum: 1 } },
  };
}
