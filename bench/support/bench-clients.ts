import type { Connection } from 'mongoose';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { registerClient, type RegisterClientInput, type RegisteredClient } from '../../core/clients/clients.service.js';

/**
 * Registers a client straight in MongoDB, as an operator does with the admin CLI. A benchmark is
 * no API process: it keeps no client reads, so there is no cache of its own to forget.
 */
export function registerBenchClient(mongo: Connection, input: RegisterClientInput): Promise<RegisteredClient> {
  const stores = {
    clients: createClientsRepository(mongo),
    activity: createActivityRepository(mongo),
    lookup: { invalidate: () => undefined },
    logger: { warn: () => undefined },
  };
  return registerClient(stores, input);
}
