import { priorityOfEnrollmentJob } from '../../../core/platform/queues/enrollment.queue.js';

describe('the dispatch priority an enrollment job carries (its BullMQ priority)', () => {
  test('when a job was queued without a priority (within the fair share, a re-issue, or by an earlier version), then its messages get none', () => {
    expect(priorityOfEnrollmentJob({ priority: 0 })).toBeUndefined();
    expect(priorityOfEnrollmentJob({})).toBeUndefined();
  });

  test('when a job was queued with a priority, then its messages get that one', () => {
    expect(priorityOfEnrollmentJob({ priority: 1 })).toBe(1);
    expect(priorityOfEnrollmentJob({ priority: 2 ** 21 })).toBe(2 ** 21);
  });
});
