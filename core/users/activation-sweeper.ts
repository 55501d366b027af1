import type { Logger } from '../platform/logger/logger.js';
import { activationsSwept } from '../platform/metrics/business-metrics.js';
import { enrollmentJobId } from '../platform/queues/enrollment.queue.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { ActivationDeliveries } from './activation-deliveries.service.js';
import type { UsersRepository } from './users.repository.js';

const BATCH = 200;
/** The longest a user whose activation keeps failing waits between two tries. */
export const MAX_PREPARATION_RETRY_MS = 6 * 3600_000;

export interface ActivationSweeperDeps {
  users: Pick<UsersRepository, 'findUnpreparedActivations' | 'deferActivationPreparation'>;
  activationDeliveries: ActivationDeliveries;
  logger: Logger;
  graceMs: number;
}

/** The grace period, doubled per earlier failure, at most MAX_PREPARATION_RETRY_MS. */
const retryDelayMs = (graceMs: number, earlierFailures: number) => Math.min(graceMs * 2 ** earlierFailures, MAX_PREPARATION_RETRY_MS);

/**
 * Prepares the activation messages of users whose enrollment job never ran (Redis lost it, or
 * it failed for good): does the job's own idempotent work, so nothing accepted is lost. A user
 * whose activation cannot be prepared (a code that no longer decrypts) is logged, counted and
 * put off with a back-off: the users after it are still prepared, and later passes do not start
 * with it again. Resolves to how many were prepared.
 */
export async function sweepActivations(deps: ActivationSweeperDeps, now = new Date()): Promise<number> {
  const pending = await deps.users.findUnpreparedActivations(new Date(now.getTime() - deps.graceMs), BATCH, now);
  let prepared = 0;
  let failed = 0;
  for (const { enterpriseId, userId, issue, failures } of pending) {
    const ref = { enterpriseId, userId };
    try {
      // No dispatch priority: these are late already (docs/operations.md, dispatch slots).
      await deps.activationDeliveries.prepareAndQueue(ref, issue);
      prepared += 1;
      activationsSwept.inc({ outcome: 'prepared' });
    } catch (err) {
      failed += 1;
      activationsSwept.inc({ outcome: 'failed' });
      await putOff(deps, ref, issue, failures, now, err);
    }
  }
  if (pending.length > 0) deps.logger.info({ prepared, failed }, 'activation sweep');
  return prepared;
}

async function putOff(deps: ActivationSweeperDeps, ref: UserRef, issue: number, failures: number, now: Date, err: unknown): Promise<void> {
  const retryAt = new Date(now.getTime() + retryDelayMs(deps.graceMs, failures));
  // Named by its enrollment job id, which the logger prints with the user id masked.
  const named = { enterpriseId: ref.enterpriseId, enrollmentJobId: enrollmentJobId(ref.enterpriseId, ref.userId, issue) };
  deps.logger.error(
    { err, ...named, failures: failures + 1, retryAt },
    'activation sweep could not prepare an activation; tried again later',
  );
  try {
    await deps.users.deferActivationPreparation(ref, issue, retryAt);
  } catch (deferErr) {
    // Not put off: the next pass tries it again, and the other users are still prepared.
    deps.logger.warn({ err: (deferErr as Error).message, ...named }, 'activation sweep could not put off a failed activation');
  }
}
