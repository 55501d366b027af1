import type { Queue } from 'bullmq';
import { JOB_RETENTION } from './job-retention.js';

/** Expiry and callback jobs name a notification; the record holds everything else. */
export interface NotificationJobData {
  notificationUuid: string;
}

export const EXPIRE_JOB = 'expire';
export const CALLBACK_JOB = 'callback';

/** One expiry job per notification: a repeated enqueue (retry, sweep) is a no-op while it exists. */
export const expiryJobId = (notificationUuid: string) => `expire-${notificationUuid}`;
/** One callback per notification: it has one final state, so one delivery (retried) suffices. */
export const callbackJobId = (notificationUuid: string) => `callback-${notificationUuid}`;

/** Callbacks are retried for about a day (see callbackBackoffMs): 12 doublings from the base, then hourly. */
export const CALLBACK_ATTEMPTS = 36;

/**
 * Delay before retry `attemptsMade` (1-based): base, 2×base, 4×base ... capped at one hour.
 * With the default 1 s base the first 12 retries take about 68 minutes, the next 23 one hour
 * each: about 24 hours in all.
 */
export function callbackBackoffMs(attemptsMade: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attemptsMade - 1, 30), 3_600_000);
}

/**
 * How long the retries of a callback take in all (every backoff of CALLBACK_ATTEMPTS attempts):
 * about a day with the default base. A callback held back without trying is given up after it.
 */
export function callbackRetryWindowMs(baseMs: number): number {
  let total = 0;
  for (let made = 1; made < CALLBACK_ATTEMPTS; made++) total += callbackBackoffMs(made, baseMs);
  return total;
}

/**
 * The delayed job that expires the notification at `expiresAt`. The delay is taken from this
 * machine's clock; the processor checks the record against the clock again when it runs.
 */
export async function enqueueExpiry(queue: Queue, notificationUuid: string, expiresAt: Date): Promise<void> {
  await queue.add(EXPIRE_JOB, { notificationUuid } satisfies NotificationJobData, {
    jobId: expiryJobId(notificationUuid),
    delay: Math.max(expiresAt.getTime() - Date.now(), 0),
    attempts: 8,
    backoff: { type: 'exponential', delay: 200 },
    ...JOB_RETENTION,
  });
}

export async function enqueueCallback(queue: Queue, notificationUuid: string): Promise<void> {
  await queue.add(CALLBACK_JOB, { notificationUuid } satisfies NotificationJobData, {
    jobId: callbackJobId(notificationUuid),
    attempts: CALLBACK_ATTEMPTS,
    backoff: { type: 'callback' },
    ...JOB_RETENTION,
  });
}

/**
 * For the sweep: queues again the callback of a notification still WAITING whose job ended
 * without marking it (its runs stalled out, or the last run could not write FAILED). An add alone
 * is a no-op while the ended job is kept (JOB_RETENTION), so the ended job is removed first; a
 * job still waiting, delayed for a retry or running is left alone. True when a job was queued.
 */
export async function requeueCallback(queue: Queue, notificationUuid: string): Promise<boolean> {
  const state = await queue.getJobState(callbackJobId(notificationUuid));
  if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
  // Another sweep may have removed it first: the add below is idempotent on the job id anyway.
  if (state !== 'unknown') await queue.remove(callbackJobId(notificationUuid));
  await enqueueCallback(queue, notificationUuid);
  return true;
}
