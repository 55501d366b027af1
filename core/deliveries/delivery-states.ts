import type { Delivery, DeliveryState } from './delivery.types.js';
import type { SentOutcome } from './sent-journal.js';

/*
 * How a delivery row moves, in one place. Every write that changes a row's state is one
 * conditional update whose filter comes from here, so MongoDB settles races (a send against a
 * cancel or the expiry, two receipts, two replays): a write that no longer applies matches nothing.
 *
 *   QUEUED ──send──────────▶ SENT ──receipt──▶ DELIVERED
 *     │                       └───receipt──▶ FAILED
 *     └─refusal, retries used up, expiry, cancel, request not answered──▶ FAILED
 *   FAILED ──operator replay──▶ QUEUED
 *   FAILED (ended unsent: expired or cancelled) ──a send journaled just before──▶ SENT
 *
 * The last edge exists because a worker can hand a message over and journal it just as the OTP
 * expires or is cancelled: the send is the truth, so it overrides the row's "ended unsent".
 */

/** Why a row ended without a send: its OTP expired first. */
export const EXPIRED_BEFORE_SENDING = 'expired before it could be sent';
/** Why a row ended without a send: its OTP was cancelled first. */
export const CANCELLED_BEFORE_SENDING = 'cancelled before it could be sent';
/** Rows of a request whose answer was an error (its store failed while writing them). */
export const REQUEST_NOT_ANSWERED = 'request failed before it was answered';

/** The ends a send recorded afterwards still overrides. */
const ENDED_UNSENT: readonly string[] = [EXPIRED_BEFORE_SENDING, CANCELLED_BEFORE_SENDING];

/** Every edge of the diagram above, for readers and tests; the filters below implement them. */
export const DELIVERY_TRANSITIONS: Readonly<Record<DeliveryState, readonly DeliveryState[]>> = {
  QUEUED: ['SENT', 'FAILED'],
  SENT: ['DELIVERED', 'FAILED'],
  FAILED: ['QUEUED', 'SENT'],
  DELIVERED: [],
};

/** Rows a recorded send applies to: waiting, or ended unsent by the clock or a cancel. */
export const takesASendFilter = () => ({
  $or: [{ state: 'QUEUED' as const }, { state: 'FAILED' as const, lastError: { $in: [...ENDED_UNSENT] } }],
});

/** The same rule as takesASendFilter, for a row in hand (a test checks they agree). */
export const takesASend = (row: Pick<Delivery, 'state' | 'lastError'>): boolean =>
  row.state === 'QUEUED' || (row.state === 'FAILED' && ENDED_UNSENT.includes(row.lastError ?? ''));

/** Rows that can still end FAILED without a send (a refusal, the expiry, a cancel): only waiting ones. */
export const unsentFilter = () => ({ state: 'QUEUED' as const });

/** Rows a provider's receipt applies to: sent and not yet final (a late FAILED never overrides DELIVERED). */
export const receiptFilter = () => ({ state: 'SENT' as const });

/** A FAILED row as it was read (`failedAt` its updatedAt then): of two replays of one failure, one wins. */
export const replayFilter = (failedAt: Date) => ({ state: 'FAILED' as const, updatedAt: failedAt });

/** The row as a recorded send leaves it (unchanged when the send no longer applies). */
export function rowAfterSend(row: Delivery, outcome: SentOutcome): Delivery {
  if (!takesASend(row)) return row;
  const { lastError: _cleared, secretMacros: _dropped, ...rest } = row;
  return { ...rest, state: 'SENT', providerMessageId: outcome.providerMessageId, attempts: outcome.attempts, updatedAt: outcome.sentAt };
}
