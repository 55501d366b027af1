import type { Queue } from 'bullmq';
import { DEFAULT_ENTERPRISE_ID } from '../tenancy/enterprise-id.js';
import { JOB_RETENTION } from './job-retention.js';

/**
 * The enrollment job names a user and a code issue: never the code or an address. Jobs queued
 * before enterprises existed have no enterpriseId: theirs is the default enterprise.
 */
export interface EnrollmentJobData {
  enterpriseId?: string;
  userId: string;
  issue: number;
}

export const ENROLLMENT_JOB = 'send-activation';

export const ENROLLMENT_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  ...JOB_RETENTION,
} as const;

/**
 * One job per code issue: a retried enrollment or re-issue never sends twice. The default
 * enterprise keeps the id of before enterprises; others put the enterprise before a `~`, which
 * neither id may contain, so the forms cannot collide. The logger masks the userId part of these
 * ids on every line (core/platform/logger/ids-with-user-ids.ts): a change of this format changes
 * that pattern too.
 */
export const enrollmentJobId = (enterpriseId: string, userId: string, issue: number) =>
  enterpriseId === DEFAULT_ENTERPRISE_ID ? `enroll-${userId}-${issue}` : `enroll-${enterpriseId}~${userId}-${issue}`;

/**
 * `priority` (dispatch-fairness.ts; none: first-come-first-served) orders the job in this queue and
 * is the one its activation messages get in the dispatch queue: the worker reads it back from the
 * job (`job.priority`), not from the data, so the data keeps the shape every worker version
 * validates, and a job queued without one (by an earlier version too) reads as none.
 */
export async function enqueueEnrollment(queue: Queue, data: Required<EnrollmentJobData>, priority?: number): Promise<void> {
  const jobId = enrollmentJobId(data.enterpriseId, data.userId, data.issue);
  await queue.add(
    ENROLLMENT_JOB,
    { enterpriseId: data.enterpriseId, userId: data.userId, issue: data.issue } satisfies EnrollmentJobData,
    priority === undefined ? { ...ENROLLMENT_JOB_OPTIONS, jobId } : { ...ENROLLMENT_JOB_OPTIONS, jobId, priority },
  );
}

/** The dispatch priority an enrollment job carries: BullMQ reads a job without one as 0. */
export const priorityOfEnrollmentJob = (job: { priority?: number }): number | undefined =>
  job.priority !== undefined && job.priority > 0 ? job.priority : undefined;
