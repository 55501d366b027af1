import type { Queue } from 'bullmq';
import { eventually } from './waiting.js';

/** The states of a job that may still run, and so still send a message or call back. */
const UNFINISHED = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Waits until the queue holds no job that may still run: every job added so far has ended. The
 * marker a test needs before it asserts that something was not sent: whatever was queued has had
 * its turn.
 */
export async function queueSettled(queue: Queue, timeoutMs?: number): Promise<void> {
  await eventually(async () => {
    const counts = await queue.getJobCounts(...UNFINISHED);
    return Object.values(counts).every((n) => n === 0) ? true : undefined;
  }, timeoutMs);
}

/**
 * Waits until a job has ended for good and returns how: completed, or failed with no retry left
 * (a job that will be retried waits as `delayed`, not `failed`).
 */
export async function jobEnded(queue: Queue, jobId: string, timeoutMs?: number): Promise<'completed' | 'failed'> {
  return eventually(async () => {
    const state = await queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, timeoutMs);
}
