import { randomInt } from 'node:crypto';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { PushDelivery } from '../../core/push/push-delivery.service.js';
import { PushSlotsBusyError } from '../../core/push/push-send-slots.js';
import { pushSends } from '../../core/platform/metrics/business-metrics.js';
import { PUSH_FANOUT_JOB, type PushFanoutJobData, type PushSendJobData } from '../../core/platform/queues/push.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** How long a push waits when its user or enterprise has its share of the slots (plus up to as much again, spread). */
const SLOTS_BUSY_DELAY_MS = 1000;
/** The push queue: fan-out jobs queue one send job per subscription; send jobs push to one browser. */
export function createSendPushProcessor(delivery: PushDelivery) {
  const validFanout = getValidator<PushFanoutJobData>('notification-push.fanout.json');
  const validSend = getValidator<PushSendJobData>('notification-push.send.json');
  return async (job: Job<PushFanoutJobData | PushSendJobData>, token?: string): Promise<{ outcome: string; subscriptions?: number }> => {
    if (job.name === PUSH_FANOUT_JOB) {
      if (!validFanout(job.data))
        throw new UnrecoverableError(`invalid push fan-out payload: ${firstSchemaErrorLine(validFanout.errors, '(payload)')}`);
      return delivery.fanout(job.data.notificationUuid);
    }
    if (!validSend(job.data)) throw new UnrecoverableError(`invalid push payload: ${firstSchemaErrorLine(validSend.errors, '(payload)')}`);
    try {
      return { outcome: await delivery.send(job.data.notificationUuid, job.data.subscriptionId) };
    } catch (err) {
      // Its user or enterprise holds its share of the slots: it waits a second or two, without a
      // request and without using up an attempt (those are for the push service's failures). It
      // cannot wait for ever: once its notification has ended, the send is skipped.
      if (err instanceof PushSlotsBusyError && token !== undefined) {
        pushSends.inc({ outcome: 'deferred' });
        await job.moveToDelayed(Date.now() + SLOTS_BUSY_DELAY_MS + randomInt(SLOTS_BUSY_DELAY_MS), token);
        throw new DelayedError();
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) delivery.gaveUp();
      throw err;
    }
  };
}
