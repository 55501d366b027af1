import type { Queue } from 'bullmq';
import { JOB_RETENTION } from './job-retention.js';

/** The enrollment job names a user and a code issue: never the code or an address. */
export interface EnrollmentJobData {
  userId: string;
  issue: number;
}

export const ENROLLMENT_JOB = 'send-activation';

export const ENROLLMENT_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  ...JOB_RETENTION,
} as const;

/** One job per code issue: a retried enrollment or re-issue never sends twice. */
export const enrollmentJobId = (userId: string, issue: number) => `enroll-${userId}-${issue}`;

export async function enqueueEnrollment(queue: Queue, data: EnrollmentJobData): Promise<void> {
  await queue.add(ENROLLMENT_JOB, { userId: data.userId, issue: data.issue } satisfies EnrollmentJobData, {
    ...ENROLLMENT_JOB_OPTIONS,
    jobId: enrollmentJobId(data.userId, data.issue),
  });
}
