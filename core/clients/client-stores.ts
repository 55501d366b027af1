import type { ActivityRepository } from '../activity/activity.repository.js';
import type { Logger } from '../platform/logger/logger.js';
import type { ClientLookup } from './client-lookup.cache.js';
import type { ClientsRepository } from './clients.repository.js';

/** What the administration of clients works on, built once at a composition root and handed down. */
export interface ClientStores {
  clients: ClientsRepository;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /** This process's client reads, forgotten after a change so that it applies here at once. */
  lookup: Pick<ClientLookup, 'invalidate'>;
  /** Where an activity entry left to the sweep is logged. */
  logger: Pick<Logger, 'warn'>;
}
