import type { Queue } from 'bullmq';
import { JOB_RETENTION } from './job-retention.js';

/** The fan-out job names a notification; it queues one send job per subscription of its user. */
export interface PushFanoutJobData {
  notificationUuid: string;
}

/** One push to one subscription, retried on its own: another browser's failure never resends this one. */
export interface PushSendJobData {
  notificationUuid: string;
  subscriptionId: string;
}

export const PUSH_FANOUT_JOB = 'fanout';
export const PUSH_SEND_JOB = 'send';

// Job ids make every enqueue idempotent: a retried fan-out queues no second push to a browser.
export const pushFanoutJobId = (notificationUuid: string) => `push-${notificationUuid}`;
export const pushSendJobId = (notificationUuid: string, subscriptionId: string) => `push-${notificationUuid}-${subscriptionId}`;

/** A push is worth retrying only while its notification waits: minutes, not the day of a callback. */
export const PUSH_ATTEMPTS = 8;

/** Delay before retry `attemptsMade` (1-based): base, 2×base, 4×base ... capped at five minutes. */
export function pushBackoffMs(attemptsMade: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attemptsMade - 1, 30), 300_000);
}

const retried = { attempts: PUSH_ATTEMPTS, backoff: { type: 'push' }, ...JOB_RETENTION };

export async function enqueuePushFanout(queue: Queue, notificationUuid: string): Promise<void> {
  await queue.add(PUSH_FANOUT_JOB, { notificationUuid } satisfies PushFanoutJobData, {
    jobId: pushFanoutJobId(notificationUuid),
    ...retried,
  });
}

export async function enqueuePushSends(queue: Queue, notificationUuid: string, subscriptionIds: string[]): Promise<void> {
  if (subscriptionIds.length === 0) return;
  await queue.addBulk(
    subscriptionIds.map((subscriptionId) => ({
      name: PUSH_SEND_JOB,
      data: { notificationUuid, subscriptionId } satisfies PushSendJobData,
      opts: { jobId: pushSendJobId(notificationUuid, subscriptionId), ...retried },
    })),
  );
}
