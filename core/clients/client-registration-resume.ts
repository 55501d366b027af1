import type { ClientStores } from './client-stores.js';
import { rotateClientSecret } from './client-secret-rotation.js';
import { rotateClientCallbackSecret, type RegisteredClient } from './clients.service.js';

/**
 * Finishes a registration whose first request created the client and died before answering
 * (an Idempotency-Key retry): no second client is made. The secrets it created were never shown
 * to anyone and only their hash (or sealed copy) is kept, so new ones are issued in their place,
 * the unseen client secret stopping at once. Undefined when the first request created nothing.
 */
export async function resumeClientRegistration(
  stores: ClientStores,
  clientId: string,
  options: { encryptionKey: Buffer; comments?: string },
): Promise<RegisteredClient | undefined> {
  const client = await stores.clients.findClient(clientId);
  if (!client) return undefined;
  if (client.isPublic) return { client };
  const why = ['secrets reissued: the request that created the client was not answered', options.comments].filter(Boolean).join('; ');
  const { clientSecret } = await rotateClientSecret(stores, clientId, { graceSeconds: 0, comments: why });
  const callbackSecret = await rotateClientCallbackSecret(stores, clientId, { encryptionKey: options.encryptionKey, comments: why });
  return { client, clientSecret, callbackSecret };
}
