import { randomInt } from 'node:crypto';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { CallbackDelivery } from '../../core/notifications/callback-delivery.service.js';
import { CallbackCircuitOpenError } from '../../core/notifications/callback-circuits.js';
import { CallbackHostBusyError } from '../../core/notifications/callback-host-slots.js';
import { callbacksDeferred } from '../../core/platform/metrics/business-metrics.js';
import { callbackRetryWindowMs, type NotificationJobData } from '../../core/platform/queues/notification.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** How long a callback waits when its receiver's host has its share of the slots (plus up to as much again, spread). */
const HOST_BUSY_DELAY_MS = 1000;
/** Spread of the callbacks held back by an open circuit, so they do not all come back at one moment. */
const CIRCUIT_SPREAD_MS = 1000;

/** When a held-back callback is tried again; undefined for an error that is not a deferral. */
function deferredUntil(err: unknown): { at: number; reason: 'host_busy' | 'circuit_open' } | undefined {
  if (err instanceof CallbackHostBusyError)
    return { at: Date.now() + HOST_BUSY_DELAY_MS + randomInt(HOST_BUSY_DELAY_MS), reason: 'host_busy' };
  if (err instanceof CallbackCircuitOpenError) return { at: err.retryAt + randomInt(CIRCUIT_SPREAD_MS), reason: 'circuit_open' };
  return undefined;
}

/**
 * One signed callback; failures are retried with backoff, the last one marks it FAILED. A callback
 * whose receiver already holds its share of this worker's slots, or whose receiver's circuit is
 * open (it failed several times in a row), waits without a request and without using up one of
 * its attempts (they are for the receiver's failures), so other receivers' callbacks go first.
 * Waiting never takes a callback past the day its attempts would have taken: after that it is
 * FAILED like one whose attempts ran out.
 */
export function createSendCallbackProcessor(delivery: CallbackDelivery, retryBaseMs: number) {
  const validate = getValidator<NotificationJobData>('notification-callback.callback.json');
  const windowMs = callbackRetryWindowMs(retryBaseMs);
  return async (job: Job<NotificationJobData>, token?: string): Promise<{ outcome: string }> => {
    if (!validate(job.data))
      throw new UnrecoverableError(`invalid callback payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    try {
      return { outcome: await delivery.deliver(job.data.notificationUuid) };
    } catch (err) {
      const deferral = deferredUntil(err);
      if (deferral && token !== undefined) {
        if (deferral.at > job.timestamp + windowMs) {
          await delivery.giveUp(job.data.notificationUuid);
          throw new UnrecoverableError(`callback given up: its receiver was held back past its retry window (${(err as Error).message})`);
        }
        callbacksDeferred.inc({ reason: deferral.reason });
        await job.moveToDelayed(deferral.at, token);
        throw new DelayedError();
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await delivery.giveUp(job.data.notificationUuid);
      throw err;
    }
  };
}
