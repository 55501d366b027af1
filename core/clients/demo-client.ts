import { isDuplicateKeyError as isDuplicateKey } from '../platform/db/duplicate-key.js';
import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import type { ClientsRepository } from './clients.repository.js';

/** The approver example app's client: a fixed id, so every API process and every restart agree on it. */
export const DEMO_CLIENT_ID = 'approver-demo';

/**
 * Makes sure the approver example app has its public, first-party client, signing in users of the
 * default enterprise with the app's own page as the only redirect URI. Safe to run from several
 * processes at once: the fixed client id makes a second insert fail on the unique index, and a
 * changed PUBLIC_URL moves the redirect URI.
 */
export async function ensureDemoClient(
  clients: Pick<ClientsRepository, 'findClient' | 'insertClient' | 'setRedirectUris'>,
  publicUrl: string,
): Promise<{ clientId: string; redirectUri: string }> {
  const redirectUri = `${publicUrl}/demo/approver/`;
  const existing = await clients.findClient(DEMO_CLIENT_ID);
  if (!existing) {
    try {
      await clients.insertClient({
        clientId: DEMO_CLIENT_ID,
        enterpriseId: DEFAULT_ENTERPRISE_ID,
        name: 'Approver (example app)',
        scopes: [],
        allowedIps: [],
        redirectUris: [redirectUri],
        webOrigins: [],
        isPublic: true,
        firstParty: true,
        secretHash: null,
        callbackSecretEncrypted: null,
        createdAt: new Date(),
      });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  } else if (existing.redirectUris.length !== 1 || existing.redirectUris[0] !== redirectUri) {
    await clients.setRedirectUris(DEMO_CLIENT_ID, [redirectUri]);
  }
  return { clientId: DEMO_CLIENT_ID, redirectUri };
}
