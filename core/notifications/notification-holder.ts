import type { ClientRef, UserRef } from '../platform/tenancy/enterprise-id.js';
import { clientFilter, userFilter } from '../platform/tenancy/tenant-filter.js';
import type { Notification } from './notification.types.js';

/**
 * Whose notification a write may end: the user's (answers, dismissals), the creating client's
 * (cancellation), or any by its id ('system': expiry and the discard the service itself runs).
 */
export type NotificationHolder = { user: UserRef } | { client: ClientRef } | 'system';

/** The filter that confines a write to the holder's notifications. */
export function holderFilter(holder: NotificationHolder): Record<string, string> {
  if (holder === 'system') return {};
  return 'user' in holder ? userFilter(holder.user) : clientFilter(holder.client);
}

/** Whether the record is the holder's (a refusal names only the holder's own notification). */
export function isHeldBy(n: Pick<Notification, 'enterpriseId' | 'userId' | 'clientId'>, holder: NotificationHolder): boolean {
  return Object.entries(holderFilter(holder)).every(([field, value]) => n[field as 'enterpriseId' | 'userId' | 'clientId'] === value);
}
