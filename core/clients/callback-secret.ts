import { randomBytes } from 'node:crypto';
import type { OwedEntry } from '../activity/owed-entries.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import type { ClientsRepository } from './clients.repository.js';

// The callback secret keys an HMAC the service computes, so, unlike the client secret, it cannot
// be stored as a hash: it is kept encrypted with the server key, bound to its client id.
/** What a client's sealed callback secret is bound to: the client. */
export const callbackSecretContext = (clientId: string) => `callback-secret:${clientId}`;
const context = callbackSecretContext;

export function generateCallbackSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sealCallbackSecret(clientId: string, secret: string, encryptionKey: Buffer): string {
  return encryptSecret(secret, encryptionKey, context(clientId));
}

/**
 * A new callback secret for the client, stored encrypted (with the activity entry the change
 * owes, when given); the clear one is returned once. Null: no such client.
 */
export async function rotateCallbackSecret(
  clients: Pick<ClientsRepository, 'setCallbackSecretEncrypted'>,
  clientId: string,
  encryptionKey: Buffer,
  owed?: OwedEntry,
): Promise<string | null> {
  const secret = generateCallbackSecret();
  return (await clients.setCallbackSecretEncrypted(clientId, sealCallbackSecret(clientId, secret, encryptionKey), owed)) ? secret : null;
}

/** The clear callback secret, or null when the client has none. */
export async function readCallbackSecret(
  clients: Pick<ClientsRepository, 'findCallbackSecretEncrypted'>,
  clientId: string,
  encryptionKey: Buffer,
): Promise<string | null> {
  const sealed = await clients.findCallbackSecretEncrypted(clientId);
  return sealed === null ? null : decryptSecret(sealed, encryptionKey, context(clientId));
}
