import { UnrecoverableError, type Job } from 'bullmq';
import type { CallbackDelivery } from '../../core/notifications/callback-delivery.service.js';
import type { NotificationJobData } from '../../core/platform/queues/notification.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** One signed callback; failures are retried with backoff, the last one marks it FAILED. */
export function createSendCallbackProcessor(delivery: CallbackDelivery) {
  const validate = getValidator<NotificationJobData>('notification-callback.callback.json');
  return async (job: Job<NotificationJobData>): Promise<{ outcome: string }> => {
    if (!validate(job.data))
      throw new UnrecoverableError(`invalid callback payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    try {
      return { outcome: await delivery.deliver(job.data.notificationUuid) };
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await delivery.giveUp(job.data.notificationUuid);
      throw err;
    }
  };
}
