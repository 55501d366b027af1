import { createInFlightShares } from '../platform/throttling/in-flight-shares.js';
import { receiverKey, type CallbackReceiver } from './callback-circuits.js';

/** This process already has the share of callbacks in flight that the receiver's host (or its enterprise) may hold. */
export class CallbackHostBusyError extends Error {
  constructor(
    readonly host: string,
    readonly share: 'host' | 'enterprise' = 'host',
  ) {
    super(
      share === 'host'
        ? `callbacks to ${host} already use this worker's share of its callback slots`
        : `the enterprise's callbacks already use this worker's share of its callback slots (waiting: one to ${host})`,
    );
    this.name = 'CallbackHostBusyError';
  }
}

export interface CallbackSlotShares {
  /** Callbacks of one enterprise in flight to one receiver host. */
  perHost: number;
  /** Callbacks of one enterprise in flight to all its receiver hosts together. */
  perEnterprise: number;
}

/**
 * How many callbacks this worker process has in flight to each receiver host for each enterprise,
 * at most `perHost`, and for each enterprise whatever its hosts, at most `perEnterprise`. Per
 * enterprise and host: two enterprises may share a host (a webhook provider), and one of them
 * naming a path there that never answers must not take the other's slots. Per enterprise as well:
 * a host is a name and a port, and an enterprise may name as many as it likes (its own wildcard
 * DNS name, one address on several ports), each with a share of its own, so without that cap its
 * silent receivers on a few hosts would hold every slot again.
 * A receiver that accepts connections and never answers holds each of its callbacks for the whole
 * request timeout: without the caps, one enterprise's silent receivers would take every callback
 * slot of the worker and the other enterprises' callbacks would wait behind them (in-flight-shares.ts
 * counts them in this process's memory).
 */
export function createCallbackHostSlots(shares: CallbackSlotShares) {
  const inFlight = createInFlightShares();
  return {
    /** Takes a slot for the enterprise's host and returns its release; CallbackHostBusyError when it has its share. */
    take: (receiver: CallbackReceiver): (() => void) =>
      inFlight.take([
        { key: `host ${receiverKey(receiver)}`, cap: shares.perHost, full: () => new CallbackHostBusyError(receiver.host) },
        {
          key: `enterprise ${receiver.enterpriseId}`,
          cap: shares.perEnterprise,
          full: () => new CallbackHostBusyError(receiver.host, 'enterprise'),
        },
      ]),
  };
}

export type CallbackHostSlots = ReturnType<typeof createCallbackHostSlots>;
