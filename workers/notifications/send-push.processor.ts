import { UnrecoverableError, type Job } from 'bullmq';
import type { PushDelivery } from '../../core/push/push-delivery.service.js';
import { PUSH_FANOUT_JOB, type PushFanoutJobData, type PushSendJobData } from '../../core/platform/queues/push.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** The push queue: fan-out jobs queue one send job per subscription; send jobs push to one browser. */
export function createSendPushProcessor(delivery: PushDelivery) {
  const validFanout = getValidator<PushFanoutJobData>('notification-push.fanout.json');
  const validSend = getValidator<PushSendJobData>('notification-push.send.json');
  return async (job: Job<PushFanoutJobData | PushSendJobData>): Promise<{ outcome: string; subscriptions?: number }> => {
    if (job.name === PUSH_FANOUT_JOB) {
      if (!validFanout(job.data))
        throw new UnrecoverableError(`invalid push fan-out payload: ${firstSchemaErrorLine(validFanout.errors, '(payload)')}`);
      return delivery.fanout(job.data.notificationUuid);
    }
    if (!validSend(job.data)) throw new UnrecoverableError(`invalid push payload: ${firstSchemaErrorLine(validSend.errors, '(payload)')}`);
    try {
      return { outcome: await delivery.send(job.data.notificationUuid, job.data.subscriptionId) };
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) delivery.gaveUp();
      throw err;
    }
  };
}
