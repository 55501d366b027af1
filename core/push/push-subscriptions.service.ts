import { ECDH } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import { checkCallbackUrl, type CallbackAddressPolicy } from '../notifications/callback-address-policy.js';
import { encryptSecret } from '../crypto/secret-box.js';
import type { PushSubscriptionInput, PushSubscriptionRecord } from './push-subscription.types.js';
import type { PushSubscriptionsRepository } from './push-subscriptions.repository.js';

export interface PushSubscriptionsDeps {
  repository: PushSubscriptionsRepository;
  encryptionKey: Buffer;
  /** Where endpoints may point (the callback fence: public https, loopback only where allowed). */
  endpointPolicy: CallbackAddressPolicy;
  maxPerUser: number;
  now?: () => Date;
}

type Owner = { enterpriseId: string; userId: string };

const invalid = (field: string, rule: string) => new ValidationError(`Invalid field ${field}: ${rule}`);

/** The associated data binding a sealed auth secret to its subscription. */
export const authBoxContext = (subscriptionId: string) => `push-auth:${subscriptionId}`;

/** A P-256 public key as browsers give it: an uncompressed point on the curve. */
function isP256PublicKey(value: string): boolean {
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length !== 65 || bytes[0] !== 0x04) return false;
  try {
    ECDH.convertKey(bytes, 'prime256v1');
    return true;
  } catch {
    return false;
  }
}

/**
 * The signed-in user's push subscriptions. An endpoint is a URL the worker will POST to, so it
 * passes the same address fence as callback URLs (no private or loopback targets unless allowed);
 * the host's addresses are checked again at every send.
 */
export function createPushSubscriptionsService(deps: PushSubscriptionsDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async register(owner: Owner, input: PushSubscriptionInput): Promise<{ record: PushSubscriptionRecord; created: boolean }> {
      const address = checkCallbackUrl(input.endpoint, deps.endpointPolicy);
      if (!address.ok) throw invalid('endpoint', address.reason);
      if (new URL(input.endpoint).hash) throw invalid('endpoint', 'must not have a fragment');
      if (!isP256PublicKey(input.keys.p256dh))
        throw invalid('keys.p256dh', 'must be a P-256 public key (65-byte uncompressed point, base64url)');
      if (Buffer.from(input.keys.auth, 'base64url').length !== 16) throw invalid('keys.auth', 'must be 16 bytes (base64url)');
      const at = now();
      const expiresAt = typeof input.expirationTime === 'number' ? new Date(input.expirationTime) : undefined;
      if (expiresAt && expiresAt.getTime() <= at.getTime()) throw invalid('expirationTime', 'is in the past');

      const result = await deps.repository.upsert(
        owner,
        input.endpoint,
        {
          p256dh: input.keys.p256dh,
          sealAuth: (subscriptionId) => encryptSecret(input.keys.auth, deps.encryptionKey, authBoxContext(subscriptionId)),
          ...(expiresAt ? { expiresAt } : {}),
        },
        at,
      );
      // Counted after the write (no transactions): of concurrent registrations past the cap,
      // each removes its own new record, so the cap holds even when they all lose.
      if (result.created && (await deps.repository.count(owner)) > deps.maxPerUser) {
        await deps.repository.remove(owner, result.record.subscriptionId);
        throw new ConflictError(`Too many push subscriptions: at most ${deps.maxPerUser} per user; delete one you no longer use first`);
      }
      return result;
    },

    list(owner: Owner): Promise<PushSubscriptionRecord[]> {
      return deps.repository.list(owner);
    },

    async remove(owner: Owner, subscriptionId: string): Promise<void> {
      if (!(await deps.repository.remove(owner, subscriptionId))) throw new NotFoundError('Push subscription not found');
    },
  };
}

export type PushSubscriptionsService = ReturnType<typeof createPushSubscriptionsService>;
