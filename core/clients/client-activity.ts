import type { ActivityAction } from '../activity/activity.repository.js';
import type { ClientStores } from './client-stores.js';
import type { Client } from './clients.repository.js';

/** What the operator (admin token) did to a client, in the activity record of the client's enterprise. */
export async function recordClientChange(
  stores: Pick<ClientStores, 'activity'>,
  action: Extract<ActivityAction, `client.${string}`>,
  client: Pick<Client, 'enterpriseId' | 'clientId'>,
  comments: string | undefined,
): Promise<void> {
  await stores.activity.append({
    actor: { type: 'admin' },
    action,
    enterpriseId: client.enterpriseId,
    clientId: client.clientId,
    comments,
  });
}
