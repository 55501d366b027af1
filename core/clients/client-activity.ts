import type { ActivityAction } from '../activity/activity.repository.js';
import { drawOwedEntry, type OwedEntry } from '../activity/owed-entries.js';
import type { ClientStores } from './client-stores.js';
import type { ClientKey } from './clients.repository.js';

/*
 * What the operator (admin token) did to a client goes in the activity record of the client's
 * enterprise. Each change stores the entry it owes in its own write, and the entry is written to
 * the record right after (owing-collection.ts). The answer does not wait on the record: a change
 * stored is answered as done, and an entry the record refused is written by the client's next
 * change or by the enrollment worker's sweep, once, with the change's time.
 */

/** The entry a change to a client owes, drawn when the change is made. */
export function clientChangeEntry(action: Extract<ActivityAction, `client.${string}`>, comments: string | undefined): OwedEntry {
  return drawOwedEntry(action, { type: 'admin' }, new Date(), comments);
}

/** Writes what the client owes the record, right after a change; what the record refuses is left to the sweep (logged). */
export function recordClientChanges(stores: Pick<ClientStores, 'clients' | 'activity' | 'logger'>, client: ClientKey): Promise<void> {
  return stores.clients.owedActivity.settleAfterChange(stores, client);
}
