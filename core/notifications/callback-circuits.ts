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
 * A circuit breaker per receiver host (host and port of the callbackUrl) for this worker process.
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

  function open(host: string, circuit: Circuit, wasOpen: boolean): void {
    circuit.openUntil = now() + options.coolDownMs;
    circuit.probeUntil = undefined;
    if (wasOpen) {
      callbackCircuitEvents.inc({ outcome: 'probe_failed' });
      log.warn(
        { callbackHost: host, coolDownMs: options.coolDownMs },
        'callback receiver still not answering: its callbacks stay held back',
      );
      return;
    }
    callbackCircuitEvents.inc({ outcome: 'opened' });
    callbackCircuitsOpen.inc();
    log.warn(
      { callbackHost: host, failures: circuit.failures, coolDownMs: options.coolDownMs },
      'callback receiver not answering: its callbacks are held back, then one probe is sent',
    );
  }

  function report(host: string, probe: boolean): CallbackTry {
    let reported = false;
    const once = (handle: () => void) => () => {
      if (reported) return;
      reported = true;
      handle();
    };
    return {
      answered: once(() => {
        const circuit = circuits.get(host);
        circuits.delete(host);
        if (circuit?.openUntil === undefined) return;
        callbackCircuitEvents.inc({ outcome: 'closed' });
        callbackCircuitsOpen.dec();
        log.info({ callbackHost: host }, 'callback receiver answers again: its held-back callbacks are sent');
      }),
      failed: once(() => {
        const circuit = circuits.get(host) ?? { failures: 0 };
        circuits.set(host, circuit);
        circuit.failures += 1;
        const isOpen = circuit.openUntil !== undefined;
        // A request that started before the circuit opened and failed since changes nothing.
        if (isOpen && !probe) return;
        if (isOpen || circuit.failures >= options.failures) open(host, circuit, isOpen);
      }),
      abandoned: once(() => {
        const circuit = circuits.get(host);
        if (probe && circuit) circuit.probeUntil = undefined;
      }),
    };
  }

  return {
    /** Lets a callback to `host` go and returns its report, or throws CallbackCircuitOpenError. */
    admit(host: string): CallbackTry {
      const circuit = circuits.get(host);
      if (circuit?.openUntil === undefined) return report(host, false);
      const at = now();
      if (at < circuit.openUntil) throw new CallbackCircuitOpenError(host, circuit.openUntil);
      if (circuit.probeUntil !== undefined && at < circuit.probeUntil) throw new CallbackCircuitOpenError(host, circuit.probeUntil);
      circuit.probeUntil = at + options.probeTimeoutMs;
      callbackCircuitEvents.inc({ outcome: 'probe' });
      return report(host, true);
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
