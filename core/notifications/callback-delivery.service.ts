import type { Connection } from 'mongoose';
import { readCallbackSecret } from '../clients/callback-secret.js';
import { callbackPayload, postCallback } from './notification-callback.js';
import { isFinal } from './notification-states.js';
import type { NotificationsRepository } from './notifications.repository.js';

export interface CallbackDeliveryDeps {
  repository: NotificationsRepository;
  mongo: Connection;
  encryptionKey: Buffer;
  timeoutMs: number;
}

export type CallbackOutcome = 'sent' | 'already-done' | 'no-callback' | 'missing';

export class CallbackNotReadyError extends Error {}
export class CallbackSecretMissingError extends Error {}

/**
 * Sends the final state of one notification to its callbackUrl, signed with the creating client's
 * callback secret (read at send time, so a rotation applies to retries). Throws for BullMQ to
 * retry; `giveUp` marks it FAILED after the last attempt.
 */
export function createCallbackDelivery(deps: CallbackDeliveryDeps) {
  return {
    async deliver(notificationUuid: string): Promise<CallbackOutcome> {
      const n = await deps.repository.find(notificationUuid);
      if (!n) return 'missing';
      if (!n.callbackUrl) return 'no-callback';
      if (n.callbackState !== 'WAITING') return 'already-done';
      if (!isFinal(n.status)) throw new CallbackNotReadyError('notification not ended yet');
      const secret = await readCallbackSecret(deps.mongo, n.clientId, deps.encryptionKey);
      if (secret === null)
        throw new CallbackSecretMissingError('the client has no callback secret (deleted client, or created without one: rotate one)');
      await postCallback(n.callbackUrl, JSON.stringify(callbackPayload(n)), secret, deps.timeoutMs);
      await deps.repository.setCallbackState(notificationUuid, 'SENT');
      return 'sent';
    },

    async giveUp(notificationUuid: string): Promise<void> {
      await deps.repository.setCallbackState(notificationUuid, 'FAILED');
    },
  };
}

export type CallbackDelivery = ReturnType<typeof createCallbackDelivery>;
