import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
import { clientChangeEntry, recordClientChanges } from './client-activity.js';
import type { ClientStores } from './client-stores.js';
import { generateClientSecret, hashClientSecret, verifyClientSecret } from './client-secret.js';
import type { ClientWithSecret } from './clients.repository.js';

/** The Idempotency-Key claim a rotation runs under (idempotent-requests.ts). */
export interface RotationClaim {
  id: string;
  /** A retry finishing the work of an earlier request with the key that did not answer. */
  resumed: boolean;
}

export interface RotatedClientSecret {
  clientSecret: string;
  /** Until when the replaced secret is still accepted; null when it stopped at once. */
  previousSecretExpiresAt: Date | null;
}

/**
 * Gives a confidential client a new secret (returned once, stored as its HMAC). The replaced
 * secret keeps working for `graceSeconds` so the client's deployments can switch without an
 * outage; only one replaced secret is kept, so rotating again during a grace period ends the
 * older one at once. Two rotations at the same moment: one wins, the other is a ConflictError
 * (its caller would otherwise hold a secret that was already demoted). Recorded as
 * `client.secret-rotated`. Under an Idempotency-Key `claim` the claim is stored with the new
 * secret, so a retry resuming it finds the rotation done instead of rotating again.
 */
export async function rotateClientSecret(
  stores: ClientStores,
  clientId: string,
  options: { graceSeconds: number; comments?: string; now?: Date; claim?: RotationClaim },
): Promise<RotatedClientSecret> {
  const { clients } = stores;
  const client = await clients.findClientWithSecret(clientId);
  if (!client || client.isPublic || client.secretHash === null) throw new NotFoundError('Client not found');
  const { claim } = options;
  if (claim?.resumed && client.secretRotationClaimId === claim.id) {
    return reissueUnseenSecret(stores, { ...client, secretHash: client.secretHash }, claim.id, options.comments);
  }
  const clientSecret = generateClientSecret();
  const now = options.now ?? new Date();
  const previousSecretExpiresAt = options.graceSeconds > 0 ? new Date(now.getTime() + options.graceSeconds * 1000) : null;
  const owed = clientChangeEntry('client.secret-rotated', options.comments);
  if (
    !(await clients.replaceSecretHash(
      clientId,
      client.secretHash,
      hashClientSecret(clientSecret),
      previousSecretExpiresAt,
      owed,
      claim?.id,
    ))
  ) {
    if (!(await clients.findClientWithSecret(clientId))) throw new NotFoundError('Client not found');
    throw new ConflictError('Client secret was rotated by another request at the same time; rotate again');
  }
  stores.lookup.invalidate(clientId);
  await recordClientChanges(stores, client);
  return { clientSecret, previousSecretExpiresAt };
}

/**
 * The keyed rotation `claimId` was done by a request that died before answering, so its secret
 * reached nobody: it is replaced by a new one (stopping at once), while the secret it replaced
 * keeps the grace that rotation gave it. A second rotation would end that grace early.
 */
async function reissueUnseenSecret(
  stores: ClientStores,
  client: ClientWithSecret & { secretHash: string },
  claimId: string,
  comments: string | undefined,
): Promise<RotatedClientSecret> {
  const clientSecret = generateClientSecret();
  const why = ['secret reissued: the rotation that set it was not answered', comments].filter(Boolean).join('; ');
  const owed = clientChangeEntry('client.secret-rotated', why);
  if (!(await stores.clients.replaceUnseenSecretHash(client.clientId, claimId, client.secretHash, hashClientSecret(clientSecret), owed))) {
    if (!(await stores.clients.findClientWithSecret(client.clientId))) throw new NotFoundError('Client not found');
    throw new ConflictError('Client secret was rotated by another request at the same time; rotate again');
  }
  stores.lookup.invalidate(client.clientId);
  await recordClientChanges(stores, client);
  return { clientSecret, previousSecretExpiresAt: client.previousSecretExpiresAt ?? null };
}

/** The stored forms a presented secret may match: the current one, and the replaced one until its grace period ends. */
export type StoredSecrets = Pick<ClientWithSecret, 'secretHash' | 'previousSecretHash' | 'previousSecretExpiresAt'>;

/**
 * True when `presented` is the client's current secret, or the replaced one within its grace
 * period. Both comparisons always run (each constant-time), so the answer's timing does not tell
 * which secret matched.
 */
export function acceptsClientSecret(stored: StoredSecrets, presented: string, now: Date = new Date()): boolean {
  const current = typeof stored.secretHash === 'string' && verifyClientSecret(stored.secretHash, presented);
  const inGrace = stored.previousSecretExpiresAt instanceof Date && now.getTime() < stored.previousSecretExpiresAt.getTime();
  const previous = typeof stored.previousSecretHash === 'string' && verifyClientSecret(stored.previousSecretHash, presented);
  return current || (inGrace && previous);
}
