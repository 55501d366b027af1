import type { Queue } from 'bullmq';
import { createGroupCommit, STORE_BATCHING } from '../batching/group-commit.js';
import { JOB_RETENTION } from './job-retention.js';

/**
 * The dispatch job carries the delivery id, and for a fresh OTP the row sealed with the server key
 * (core/deliveries/delivery-envelope.ts): never a code or an address in clear (Redis is plain text).
 */
export interface DispatchJobData {
  deliveryId: string;
  sealed?: string;
}

export const DISPATCH_JOB = 'deliver';

export const DISPATCH_JOB_OPTIONS = {
  attempts: 8,
  // Exponential by default; a provider's Retry-After wins (see dispatch backoff strategy).
  backoff: { type: 'provider-aware', delay: 1000 },
  ...JOB_RETENTION,
} as const;

/**
 * Enqueues one delivery; the job id is the delivery id, so repeats are no-ops while the job exists.
 * `priority`: see dispatch-fairness.ts (the enrollment worker passes its job's).
 */
export async function enqueueDispatch(queue: Queue, deliveryId: string, priority?: number): Promise<void> {
  const job = dispatchJob(deliveryId, undefined, priority);
  await queue.add(job.name, job.data, job.opts);
}

/** `priority`: see dispatch-fairness.ts (none: first-come-first-served, ahead of every prioritized job). */
const dispatchJob = (deliveryId: string, sealed?: string, priority?: number) => ({
  name: DISPATCH_JOB,
  data: (sealed === undefined ? { deliveryId } : { deliveryId, sealed }) satisfies DispatchJobData,
  opts: priority === undefined ? { ...DISPATCH_JOB_OPTIONS, jobId: deliveryId } : { ...DISPATCH_JOB_OPTIONS, jobId: deliveryId, priority },
});

/**
 * Enqueuing for the request path: deliveries queued by concurrent requests go to Redis together
 * (one `addBulk`, a MULTI of the same per-job scripts), each caller awaiting its own job.
 */
export function createDispatchEnqueuer(queue: Queue): (deliveryId: string, sealed?: string, priority?: number) => Promise<void> {
  const batches = createGroupCommit<{ deliveryId: string; sealed?: string; priority?: number }, void>(async (jobs) => {
    await queue.addBulk(jobs.map(({ deliveryId, sealed, priority }) => dispatchJob(deliveryId, sealed, priority)));
    return jobs.map(() => ({ ok: true, value: undefined }));
  }, STORE_BATCHING);
  return (deliveryId, sealed, priority) => batches.submit({ deliveryId, sealed, priority });
}

/** Exponential backoff (1 s, 2 s, 4 s … capped at 5 min) unless the provider said when to retry. */
export function dispatchBackoffMs(attemptsMade: number, err: unknown): number {
  const retryAfterMs = (err as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  if (typeof retryAfterMs === 'number' && retryAfterMs > 0) return Math.min(retryAfterMs, 15 * 60 * 1000);
  return Math.min(1000 * 2 ** Math.max(attemptsMade - 1, 0), 5 * 60 * 1000);
}

/**
 * For the sweeper: enqueues again a delivery whose job ended without ending the row (for example
 * failed after stalling when its worker died). A job still waiting or running is left alone.
 * True when a job was queued, false when one was already there.
 */
export async function requeueDispatch(queue: Queue, deliveryId: string): Promise<boolean> {
  const existing = await queue.getJob(deliveryId);
  if (existing) {
    const state = await existing.getState();
    if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
    await existing.remove();
  }
  await enqueueDispatch(queue, deliveryId);
  return true;
}
