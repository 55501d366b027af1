import { CallbackCircuitOpenError, createCallbackCircuits, isReceiverFailure } from '../../../core/notifications/callback-circuits.js';
import { CallbackRefusedError } from '../../../core/notifications/notification-callback.js';
import { memoryLogger } from '../../support/test-service.js';

const bank = { enterpriseId: 'acme', host: 'bank.example' };

function circuits() {
  const clock = { now: 1_000_000 };
  const { logger, lines } = memoryLogger();
  const breaker = createCallbackCircuits({ failures: 3, coolDownMs: 30_000, probeTimeoutMs: 11_000, logger, now: () => clock.now });
  return { breaker, clock, lines };
}

describe('callback circuits: one breaker per enterprise and receiver host in a worker process', () => {
  test("when one enterprise's callbacks to a host fail until its circuit opens, then another enterprise's callbacks to that host still go", () => {
    const { breaker } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit({ enterpriseId: 'mallory', host: 'bank.example' }).failed();
    expect(() => breaker.admit({ enterpriseId: 'mallory', host: 'bank.example' })).toThrow(CallbackCircuitOpenError);
    expect(() => breaker.admit(bank)).not.toThrow();
  });

  test('when a receiver fails three times in a row, then its callbacks are held back until the cool-down ends, and other hosts are not', () => {
    const { breaker, clock, lines } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit(bank).failed();
    expect(() => breaker.admit(bank)).toThrow(CallbackCircuitOpenError);
    try {
      breaker.admit(bank);
    } catch (err) {
      expect((err as CallbackCircuitOpenError).retryAt).toBe(clock.now + 30_000);
    }
    expect(() => breaker.admit({ enterpriseId: 'acme', host: 'other.example' })).not.toThrow();
    const opened = lines().filter((l) => l.msg === 'callback receiver not answering: its callbacks are held back, then one probe is sent');
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ callbackHost: 'bank.example' });
  });

  test('when a receiver answers between failures, even with a 4xx, then the count starts again', () => {
    const { breaker } = circuits();
    breaker.admit(bank).failed();
    breaker.admit(bank).failed();
    breaker.admit(bank).answered();
    breaker.admit(bank).failed();
    breaker.admit(bank).failed();
    expect(() => breaker.admit(bank)).not.toThrow();
  });

  test('when the cool-down is over, then one callback goes as a probe: the others wait for it, a failure holds them back again, an answer lets them all go', () => {
    const { breaker, clock } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit(bank).failed();
    clock.now += 30_000;
    const probe = breaker.admit(bank);
    expect(() => breaker.admit(bank)).toThrow(CallbackCircuitOpenError);
    probe.failed();
    expect(() => breaker.admit(bank)).toThrow(CallbackCircuitOpenError);
    clock.now += 30_000;
    const second = breaker.admit(bank);
    second.answered();
    expect(() => breaker.admit(bank)).not.toThrow();
  });

  test('when a probe makes no request after all, or never reports, then another callback may probe', () => {
    const { breaker, clock } = circuits();
    for (let i = 0; i < 3; i++) breaker.admit(bank).failed();
    clock.now += 30_000;
    breaker.admit(bank).abandoned();
    breaker.admit(bank); // never reports
    expect(() => breaker.admit(bank)).toThrow(CallbackCircuitOpenError);
    clock.now += 11_000;
    expect(() => breaker.admit(bank)).not.toThrow();
  });

  test('when an error is judged, then no answer, 5xx and 429 are failures of the receiver and other answers are not', () => {
    expect(isReceiverFailure(new Error('The operation was aborted due to timeout'))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(503))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(429))).toBe(true);
    expect(isReceiverFailure(new CallbackRefusedError(404))).toBe(false);
    expect(isReceiverFailure(new CallbackRefusedError(302))).toBe(false);
  });
});
