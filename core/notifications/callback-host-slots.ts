import { receiverKey, type CallbackReceiver } from './callback-circuits.js';

/** This process already has its share of callbacks in flight to the receiver's host. */
export class CallbackHostBusyError extends Error {
  constructor(readonly host: string) {
    super(`callbacks to ${host} already use this worker's share of its callback slots`);
    this.name = 'CallbackHostBusyError';
  }
}

/**
 * How many callbacks this worker process has in flight to each receiver host for each enterprise,
 * at most `perHost`. Per enterprise as well: two enterprises may share a host (a webhook provider),
 * and one of them naming a path there that never answers must not take the other's slots.
 * A receiver that accepts connections and never answers holds each of its callbacks for the whole
 * request timeout: without a cap, one enterprise's silent receiver would take every callback slot
 * of the worker and the other enterprises' callbacks would wait behind it. In memory: each worker
 * process guards its own slots, and the cap scales with the number of workers as the slots do.
 */
export function createCallbackHostSlots(perHost: number) {
  const inFlight = new Map<string, number>();
  return {
    /** Takes a slot for the enterprise's host and returns its release; CallbackHostBusyError when it has its share. */
    take(receiver: CallbackReceiver): () => void {
      const key = receiverKey(receiver);
      const used = inFlight.get(key) ?? 0;
      if (used >= perHost) throw new CallbackHostBusyError(receiver.host);
      inFlight.set(key, used + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (inFlight.get(key) ?? 1) - 1;
        if (left <= 0) inFlight.delete(key);
        else inFlight.set(key, left);
      };
    },
  };
}

export type CallbackHostSlots = ReturnType<typeof createCallbackHostSlots>;
