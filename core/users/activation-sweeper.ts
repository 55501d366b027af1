import type { Logger } from '../platform/logger/logger.js';
import type { ActivationDeliveries } from './activation-deliveries.service.js';
import type { UsersRepository } from './users.repository.js';

export interface ActivationSweeperDeps {
  users: Pick<UsersRepository, 'findUnpreparedActivations'>;
  activationDeliveries: ActivationDeliveries;
  logger: Logger;
  graceMs: number;
}

/**
 * Prepares the activation messages of users whose enrollment job never ran (Redis lost it, or
 * it failed for good): does the job's own idempotent work, so nothing accepted is lost.
 */
export async function sweepActivations(deps: ActivationSweeperDeps, now = new Date()): Promise<number> {
  const pending = await deps.users.findUnpreparedActivations(new Date(now.getTime() - deps.graceMs), 200);
  for (const { enterpriseId, userId, issue } of pending) await deps.activationDeliveries.prepareAndQueue({ enterpriseId, userId }, issue);
  if (pending.length > 0) deps.logger.info({ prepared: pending.length }, 'activation sweep');
  return pending.length;
}
