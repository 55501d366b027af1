import type { Logger } from '../logger/logger.js';
import type { DeliveriesRepository } from './deliveries.repository.js';

export interface SweeperDeps {
  deliveries: DeliveriesRepository;
  enqueue: (deliveryId: string) => Promise<void>;
  logger: Logger;
  /** How long a row may stay QUEUED without progress before it is enqueued again. */
  graceMs: number;
  batchSize?: number;
}

/**
 * One sweep: ends rows whose sending window closed, and re-enqueues rows left QUEUED past the
 * grace period (Redis was down at accept time, or a job was lost). Enqueueing is deduplicated by
 * job id and the worker skips rows that already ended, so a sweep is always safe to repeat.
 */
export async function sweepDeliveries(deps: SweeperDeps, now = new Date()): Promise<{ expired: number; requeued: number }> {
  const expired = await deps.deliveries.expireUnsent(now);
  const stale = await deps.deliveries.findStaleQueued(new Date(now.getTime() - deps.graceMs), now, deps.batchSize ?? 500);
  let requeued = 0;
  for (const delivery of stale) {
    try {
      await deps.enqueue(delivery.id);
      requeued += 1;
    } catch (err) {
      deps.logger.warn({ deliveryId: delivery.id, err: (err as Error).message }, 'sweeper could not enqueue; will retry');
      break;
    }
  }
  if (requeued > 0) await deps.deliveries.touch(stale.slice(0, requeued).map((d) => d.id), now);
  if (expired + requeued > 0) deps.logger.info({ expired, requeued }, 'delivery sweep');
  return { expired, requeued };
}
