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
  const ofUser = new Map<string, number>();
  const ofEnterprise = new Map<string, number>();
  const lessOne = (counts: Map<string, number>, key: string) => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left <= 0) counts.delete(key);
    else counts.set(key, left);
  };
  return {
    /** Takes a slot for the user and returns its release; PushSlotsBusyError when the user or the enterprise has its share. */
    take(user: UserRef): () => void {
      const key = userKey(user);
      const usedByUser = ofUser.get(key) ?? 0;
      if (usedByUser >= shares.perUser) throw new PushSlotsBusyError('user');
      const usedByEnterprise = ofEnterprise.get(user.enterpriseId) ?? 0;
      if (usedByEnterprise >= shares.perEnterprise) throw new PushSlotsBusyError('enterprise');
      ofUser.set(key, usedByUser + 1);
      ofEnterprise.set(user.enterpriseId, usedByEnterprise + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        lessOne(ofUser, key);
        lessOne(ofEnterprise, user.enterpriseId);
      };
    },
  };
}

export type PushSendSlots = ReturnType<typeof createPushSendSlots>;
