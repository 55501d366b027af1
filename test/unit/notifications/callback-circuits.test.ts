import { CallbackCircuitOpenError, createCallbackCircuits, isReceiverFailure } from '../../../core/notifications/callback-circuits.js';
import { CallbackRefusedError } from '../../../core/notifications/notification-callback.js';
import { memoryLogger } from '../../support/test-service.js';

function circuits() {
  const clock = { now: 1_000_000 };
  const { logger, lines } = memoryLogger();
  const breaker = createCallbackCircuits({ failures: 3, coolDownMs: 30_000, probeTimeoutMs: 11_000, logger, now: () => clock.now });
  return { breaker, clock, lines };
}

describe('callback circuits: one breaker per receiver host in a worker process', () => {
  test('when a receiver fails three times in a row, then its callbacks are held back until the cool-down ends, and other hosts are not', () => {
    const { breaker, clock, lines } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit('bank.example').failed();
    expect(() => breaker.admit('bank.example')).toThrow(CallbackCircuitOpenError);
    try {
      breaker.admit('bank.example');
    } catch (err) {
      expect((err as CallbackCircuitOpenError).retryAt).toBe(clock.now + 30_000);
    }
    expect(() => breaker.admit('other.example')).not.toThrow();
    const opened = lines().filter((l) => l.msg === 'callback receiver not answering: its callbacks are held back, then one probe is sent');
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ callbackHost: 'bank.example' });
  });

  test('when a receiver answers between failures, even with a 4xx, then the count starts again', () => {
    const { breaker } = circuits();
    breaker.admit('bank.example').failed();
    breaker.admit('bank.example').failed();
    breaker.admit('bank.example').answered();
    breaker.admit('bank.example').failed();
    breaker.admit('bank.example').failed();
    expect(() => breaker.admit('bank.example')).not.toThrow();
  });

  test('when the cool-down is over, then one callback goes as a probe: the others wait for it, a failure holds them back again, an answer lets them all go', () => {
    const { breaker, clock } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit('bank.example').failed();
    clock.now += 30_000;
    const probe = breaker.admit('bank.example');
    expect(() => breaker.admit('bank.example')).toThrow(CallbackCircuitOpenError);
    probe.failed();
    expect(() => breaker.admit('bank.example')).toThrow(CallbackCircuitOpenError);
    clock.now += 30_000;
    const second = breaker.admit('bank.example');
    second.answered();
    expect(() => breaker.admit('bank.example')).not.toThrow();
  });

  test('when a probe makes no request after all, or never reports, then another callback may probe', () => {
    const { breaker, clock } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit('bank.example').failed();
    clock.now += 30_000;
    breaker.admit('bank.example').abandoned();
    breaker.admit('bank.example'); // never reports
    expect(() => breaker.admit('bank.example')).toThrow(CallbackCircuitOpenError);
    clock.now += 11_000;
    expect(() => breaker.admit('bank.example')).not.toThrow();
  });

  test('when an error is judged, then no answer, 5xx and 429 are failures of the receiver and other answers are not', () => {
    expect(isReceiverFailure(new Error('The operation was aborted due to timeout'))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(503))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(429))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(404))).toBe(false);
    expect(isReceiverFailure(new CallbackRefusedError(302))).toBe(false);
  });
});
