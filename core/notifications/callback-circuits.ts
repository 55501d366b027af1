import type { Logger } from '../platform/logger/logger.js';
import { callbackCircuitEvents, callbackCircuitsOpen } from '../platform/metrics/business-metrics.js';
import { CallbackRefusedError } from './notification-callback.js';

/** The receiver's circuit is open: no request to it before `retryAt` (epoch ms). */
export class CallbackCircuitOpenError extends Error {
  constructor(
    readonly host: string,
    readonly retryAt: number,
  ) {
    super(`callbacks to ${host} are held back: the receiver did not answer the last tries`);
    this.name = 'CallbackCircuitOpenError';
  }
}

/** Whose callbacks to which receiver host: circuits and host slots are kept per enterprise and host. */
export interface CallbackReceiver {
  enterpriseId: string;
  /** Host and port of the callbackUrl. */
  host: string;
}

/** A map key of one enterprise's receiver host: JSON, so no enterprise id or host can read as another pair. */
export const receiverKey = ({ enterpriseId, host }: CallbackReceiver): string => JSON.stringify([enterpriseId, host]);

/** What became of one admitted callback request; only the first report counts. */
export interface CallbackTry {
  /** The receiver answered (any status that is not a failure below): it is reachable. */
  answered(): void;
  /** No answer within the timeout, a network error, 5xx or 429. */
  failed(): void;
  /** No request was made after all (host slots busy, address refused). */
  abandoned(): void;
}

export interface CallbackCircuitOptions {
  /** Consecutive failures that open a receiver's circuit. */
  failures: number;
  /** How long an open circuit holds callbacks back before one probe may go. */
  coolDownMs: number;
  /** How long a probe may take (the request timeout): after it another callback may probe. */
  probeTimeoutMs: number;
  logger: Logger;
  now?: () => number;
}

interface Circuit {
  failures: number;
  /** Set while open: no request before this time. */
  openUntil?: number;
  /** Set while a probe is in flight (after openUntil): no other request before this time. */
  probeUntil?: number;
}

/**
 * A circuit breaker per enterprise and receiver host (host and port of the callbackUrl) for this
 * worker process. Per enterprise because a host is no proof of one owner: two enterprises may
 * use one webhook provider or gateway, and one of them naming a failing path on that host (a 500,
 * a 429 of its own account) must not hold back the other's callbacks.
 * A receiver that times out or fails `failures` times in a row would otherwise take a slot for
 * the whole timeout on each of its callbacks, over and over for a day of retries: its circuit
 * opens, its callbacks are held back without a request for `coolDownMs`, then one callback goes
 * as a probe; an answer closes the circuit and the held-back callbacks follow, a failure opens it
 * again. In memory like the host slots: each worker judges the receivers it talks to, and a
 * restart only costs a few timeouts to learn again.
 */
export function createCallbackCircuits(options: CallbackCircuitOptions) {
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'callback-circuits' });
  const circuits = new Map<string, Circuit>();

  function open({ host, enterpriseId }: CallbackReceiver, circuit: Circuit, wasOpen: boolean): void {
    circuit.openUntil = now() + options.coolDownMs;
    circuit.probeUntil = undefined;
    if (wasOpen) {
      callbackCircuitEvents.inc({ outcome: 'probe_failed' });
      log.warn(
        { callbackHost: host, enterpriseId, coolDownMs: options.coolDownMs },
        'callback receiver still not answering: its callbacks stay held back',
      );
      return;
    }
    callbackCircuitEvents.inc({ outcome: 'opened' });
    callbackCircuitsOpen.inc();
    log.warn(
      { callbackHost: host, enterpriseId, failures: circuit.failures, coolDownMs: options.coolDownMs },
      'callback receiver not answering: its callbacks are held back, then one probe is sent',
    );
  }

  function report(receiver: CallbackReceiver, probe: boolean): CallbackTry {
    const key = receiverKey(receiver);
    let reported = false;
    const once = (handle: () => void) => () => {
      if (reported) return;
      reported = true;
      handle();
    };
    return {
      answered: once(() => {
        const circuit = circuits.get(key);
        circuits.delete(key);
        if (circuit?.openUntil === undefined) return;
        callbackCircuitEvents.inc({ outcome: 'closed' });
        callbackCircuitsOpen.dec();
        log.info(
          { callbackHost: receiver.host, enterpriseId: receiver.enterpriseId },
          'callback receiver answers again: its held-back callbacks are sent',
        );
      }),
      failed: once(() => {
        const circuit = circuits.get(key) ?? { failures: 0 };
        circuits.set(key, circuit);
        circuit.failures += 1;
        const isOpen = circuit.openUntil !== undefined;
        // A request that started before the circuit opened and failed since changes nothing.
        if (isOpen && !probe) return;
        if (isOpen || circuit.failures >= options.failures) open(receiver, circuit, isOpen);
      }),
      abandoned: once(() => {
        const circuit = circuits.get(key);
        if (probe && circuit) circuit.probeUntil = undefined;
      }),
    };
  }

  return {
    /** Lets a callback of the enterprise to the host go and returns its report, or throws CallbackCircuitOpenError. */
    admit(receiver: CallbackReceiver): CallbackTry {
      const circuit = circuits.get(receiverKey(receiver));
      if (circuit?.openUntil === undefined) return report(receiver, false);
      const at = now();
      const { host } = receiver;
      if (at < circuit.openUntil) throw new CallbackCircuitOpenError(host, circuit.openUntil);
      if (circuit.probeUntil !== undefined && at < circuit.probeUntil) throw new CallbackCircuitOpenError(host, circuit.probeUntil);
      circuit.probeUntil = at + options.probeTimeoutMs;
      callbackCircuitEvents.inc({ outcome: 'probe' });
      return report(receiver, true);
    },
  };
}

export type CallbackCircuits = ReturnType<typeof createCallbackCircuits>;

/** Whether an error of postCallback says the receiver is unwell (counts towards opening its circuit). */
export function isReceiverFailure(err: unknown): boolean {
  // Not an answer at all: the timeout or a network error.
  if (!(err instanceof CallbackRefusedError)) return true;
  return err.httpStatus >= 500 || err.httpStatus === 429;
}
