import { dispatchPriority } from '../../../core/platform/queues/dispatch-fairness.js';

describe("dispatch priority from an enterprise's OTPs in the current window", () => {
  test('when an enterprise is within its fair share, then its jobs have no priority (first-come-first-served, ahead of every prioritized job)', () => {
    expect(dispatchPriority(1, 100)).toBeUndefined();
    expect(dispatchPriority(100, 100)).toBeUndefined();
  });

  test('when it sends more, then each further fair share is one priority lower, never lower than BullMQ allows', () => {
    expect(dispatchPriority(101, 100)).toBe(1);
    expect(dispatchPriority(200, 100)).toBe(1);
    expect(dispatchPriority(201, 100)).toBe(2);
    expect(dispatchPriority(5000, 100)).toBe(49);
    expect(dispatchPriority(1e12, 1)).toBe(2 ** 21);
  });

  test('when the fair share is 0, then no job has a priority', () => {
    expect(dispatchPriority(1_000_000, 0)).toBeUndefined();
  });
});
