import { FINAL_STATUSES, MAX_NUMBER_ATTEMPTS, type FinalStatus, type Notification, type NotificationStatus } from './notification.types.js';

/*
 * Which final state wins. Every write that ends a notification is one conditional update whose
 * filter comes from here, so MongoDB settles races (concurrent answers, cancel, dismiss, discard,
 * the expiry job and the sweep): exactly one write matches an ACTIVE record, and a final state is
 * never overwritten because every filter requires status ACTIVE.
 *
 * Time splits the field: before `expiresAt` only the user, the enterprise or the server can end
 * it (UPDATED, TAMPERED, DISMISSED, CANCELLED, DISCARD); from `expiresAt` on only EXPIRED can be
 * written, whatever the record still says and whether or not the worker has run. So an answer
 * one millisecond late loses to expiry even when the worker is down, and the expiry writes never
 * need to look at anything but status and expiresAt (the bulk sweep relies on that).
 */

export function isFinal(status: NotificationStatus): status is FinalStatus {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** What a reader should be told: an ACTIVE record past its expiresAt is EXPIRED already. */
export function effectiveStatus(n: Pick<Notification, 'status' | 'expiresAt'>, now: Date): NotificationStatus {
  return n.status === 'ACTIVE' && n.expiresAt.getTime() <= now.getTime() ? 'EXPIRED' : n.status;
}

/**
 * The record as a reader is told it at `now`: an ACTIVE record past its expiresAt is EXPIRED, and
 * ended at expiresAt (its answeredAt, as the callback says), whether or not a worker wrote it yet.
 */
export function asSeenAt(n: Notification, now: Date): Notification {
  const status = effectiveStatus(n, now);
  return status === n.status ? n : { ...n, status, answeredAt: n.answeredAt ?? n.expiresAt };
}

/** The filter under which `to` may be written at `now` (added to the record's own key). */
export function transitionFilter(to: FinalStatus, now: Date): Record<string, unknown> {
  return to === 'EXPIRED' ? { status: 'ACTIVE', expiresAt: { $lte: now } } : { status: 'ACTIVE', expiresAt: { $gt: now } };
}

/** A wrong matching number that still leaves attempts: counted, the notification stays ACTIVE. */
export function countedWrongNumberFilter(now: Date): Record<string, unknown> {
  return { ...transitionFilter('TAMPERED', now), numberAttempts: { $lt: MAX_NUMBER_ATTEMPTS - 1 } };
}

/** The last allowed wrong number: the notification ends TAMPERED. */
export function lastWrongNumberFilter(now: Date): Record<string, unknown> {
  return { ...transitionFilter('TAMPERED', now), numberAttempts: MAX_NUMBER_ATTEMPTS - 1 };
}

/** The answer an UPDATED notification holds, so the user's client recognises its own earlier answer. */
export interface StoredAnswer {
  action: string;
  isDsVerified: boolean;
}

export type Refusal = { kind: 'not-found' } | { kind: 'expired' } | { kind: 'ended'; status: FinalStatus; answer?: StoredAnswer };

/**
 * Why a conditional write did not match, from the record read afterwards: gone, expired (by the
 * clock or by the worker), or ended in another final state.
 */
export function refusalOf(
  current: (Pick<Notification, 'status' | 'expiresAt'> & Partial<Pick<Notification, 'action' | 'isDsVerified'>>) | null,
  now: Date,
): Refusal {
  if (!current) return { kind: 'not-found' };
  const status = effectiveStatus(current, now);
  if (status === 'EXPIRED') return { kind: 'expired' };
  if (status === 'ACTIVE') {
    // Matched nothing yet still ACTIVE and in time: only a counter filter can do that (attempts).
    return { kind: 'ended', status: 'TAMPERED' };
  }
  // Only an answer leaves an action behind: TAMPERED, DISMISSED and the others never carry one.
  if (status === 'UPDATED' && current.action !== undefined) {
    return { kind: 'ended', status, answer: { action: current.action, isDsVerified: current.isDsVerified === true } };
  }
  return { kind: 'ended', status };
}
