import type { UserRef } from '../platform/tenancy/enterprise-id.js';

/**
 * The link of an activation message: the app page with everything activation needs in the
 * fragment (`#enterprise=acme&user=alice&code=K7PQ2XMA`). The enterprise travels with the code,
 * so users of every enterprise activate by opening the link. The fragment, unlike a query, is
 * never sent to a server: the code stays out of access logs, proxies and Referer headers; the
 * app reads it and removes it from the address bar.
 */
export function activationLink(appUrl: string, ref: UserRef, code: string): string {
  const details = new URLSearchParams({ enterprise: ref.enterpriseId, user: ref.userId, code });
  return `${appUrl}#${details.toString()}`;
}
