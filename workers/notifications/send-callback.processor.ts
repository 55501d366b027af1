import { randomInt } from 'node:crypto';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { CallbackDelivery } from '../../core/notifications/callback-delivery.service.js';
import { CallbackHostBusyError } from '../../core/notifications/callback-host-slots.js';
import { callbacksDeferred } from '../../core/platform/metrics/business-metrics.js';
import type { NotificationJobData } from '../../core/platform/queues/notification.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** How long a callback waits when its receiver's host has its share of the slots (plus up to as much again, spread). */
const HOST_BUSY_DELAY_MS = 1000;

/**
 * One signed callback; failures are retried with backoff, the last one marks it FAILED. A callback
 * whose receiver already holds its share of this worker's slots waits a moment without using up
 * one of its attempts (they are for the receiver's failures), so other receivers' callbacks go first.
 */
export function createSendCallbackProcessor(delivery: CallbackDelivery) {
  const validate = getValidator<NotificationJobData>('notification-callback.callback.json');
  return async (job: Job<NotificationJobData>, token?: string): Promise<{ outcome: string }> => {
    if (!validate(job.data))
      throw new UnrecoverableError(`invalid callback payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    try {
      return { outcome: await delivery.deliver(job.data.notificationUuid) };
    } catch (err) {
      if (err instanceof CallbackHostBusyError && token !== undefined) {
        callbacksDeferred.inc();
        await job.moveToDelayed(Date.now() + HOST_BUSY_DELAY_MS + randomInt(HOST_BUSY_DELAY_MS), token);
        throw new DelayedError();
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await delivery.giveUp(job.data.notificationUuid);
      throw err;
    }
  };
}
