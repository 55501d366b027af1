import { UnrecoverableError, type Job } from 'bullmq';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { priorityOfEnrollmentJob, type EnrollmentJobData } from '../../core/platform/queues/enrollment.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';
import type { ActivationDeliveries } from '../../core/users/activation-deliveries.service.js';

/**
 * One enrollment job: the activation deliveries of one code issue, written and queued for the
 * dispatch worker with the job's own priority (dispatch fairness). Failures (MongoDB) are rethrown
 * for BullMQ's backoff; the work is idempotent.
 */
export function createSendActivationProcessor(activationDeliveries: ActivationDeliveries) {
  const validate = getValidator<EnrollmentJobData>('enrollment.send-activation.json');
  return async (job: Job<EnrollmentJobData>): Promise<{ queued: number }> => {
    if (!validate(job.data))
      throw new UnrecoverableError(`invalid enrollment payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    const ref = { enterpriseId: job.data.enterpriseId ?? DEFAULT_ENTERPRISE_ID, userId: job.data.userId };
    const { queued } = await activationDeliveries.prepareAndQueue(ref, job.data.issue, priorityOfEnrollmentJob(job));
    return { queued: queued.length };
  };
}
