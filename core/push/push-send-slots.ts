import { createInFlightShares } from '../platform/throttling/in-flight-shares.js';
import { userKey, type UserRef } from '../platform/tenancy/enterprise-id.js';

/** This process already has the share of pushes in flight that the user (or their enterprise) may hold. */
export class PushSlotsBusyError extends Error {
  constructor(readonly share: 'user' | 'enterprise') {
    super(`the ${share}'s pushes already use this worker's share of its push slots`);
    this.name = 'PushSlotsBusyError';
  }
}

export interface PushSlotShares {
  /** Pushes to one user's subscriptions in flight at once. */
  perUser: number;
  /** Pushes to the subscriptions of one enterprise's users in flight at once. */
  perEnterprise: number;
}

/**
 * How many pushes this worker process has in flight for each user and each enterprise. A user
 * chooses their subscriptions' endpoints, and one that accepts connections and never answers holds
 * its push's slot for the whole timeout, then again at each retry while the notification is
 * pending: without these caps one user's ten silent endpoints (or an enterprise's users') would
 * take every push slot of the worker, and every other user's pushes would wait behind them. In
 * memory: each worker process guards its own slots, as for callbacks (callback-host-slots.ts).
 */
export function createPushSendSlots(shares: PushSlotShares) {
  const inFlight = createInFlightShares();
  return {
    /** Takes a slot for the user and returns its release; PushSlotsBusyError when the user or the enterprise has its share. */
    take: (user: UserRef): (() => void) =>
      inFlight.take([
        { key: `user ${userKey(user)}`, cap: shares.perUser, full: () => new PushSlotsBusyError('user') },
        { key: `enterprise ${user.enterpriseId}`, cap: shares.perEnterprise, full: () => new PushSlotsBusyError('enterprise') },
      ]),
  };
}

export type PushSendSlots = ReturnType<typeof createPushSendSlots>;
