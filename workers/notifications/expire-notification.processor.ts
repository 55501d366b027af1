import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { NotificationsService } from '../../core/notifications/notifications.service.js';
import type { NotificationJobData } from '../../core/platform/queues/notification.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

// A job that runs a little early (clock skew between this host and Redis) waits in process when
// the wait is this short; longer, it goes back to the delayed set.
const MAX_IN_PROCESS_WAIT_MS = 2000;

/** The delayed expiry job: EXPIRED at expiresAt unless something else ended it first. */
export function createExpireNotificationProcessor(service: Pick<NotificationsService, 'expire'>) {
  const validate = getValidator<NotificationJobData>('notification.expire.json');
  return async (job: Job<NotificationJobData>, token?: string): Promise<{ outcome: string }> => {
    if (!validate(job.data)) throw new UnrecoverableError(`invalid expiry payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    let result = await service.expire(job.data.notificationUuid);
    if (result.outcome === 'not-due' && result.inMs <= MAX_IN_PROCESS_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, result.outcome === 'not-due' ? result.inMs : 0));
      result = await service.expire(job.data.notificationUuid);
    }
    if (result.outcome === 'not-due') {
      await job.moveToDelayed(Date.now() + result.inMs, token);
      throw new DelayedError();
    }
    return { outcome: result.outcome };
  };
}
