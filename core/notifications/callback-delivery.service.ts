import { readCallbackSecret } from '../clients/callback-secret.js';
import type { ClientsRepository } from '../clients/clients.repository.js';
import type { Logger } from '../platform/logger/logger.js';
import type { CallbackAddressPolicy } from './callback-address-policy.js';
import { isReceiverFailure, type CallbackCircuits, type CallbackReceiver, type CallbackTry } from './callback-circuits.js';
import type { CallbackHostSlots } from './callback-host-slots.js';
import { CallbackAddressRefusedError, type Resolver } from './guarded-post.js';
import { callbackPayload, postCallback } from './notification-callback.js';
import { isFinal } from './notification-states.js';
import type { NotificationsRepository } from './notifications.repository.js';

export interface CallbackDeliveryDeps {
  repository: NotificationsRepository;
  clients: Pick<ClientsRepository, 'findCallbackSecretEncrypted'>;
  encryptionKey: Buffer;
  timeoutMs: number;
  /** Which addresses callbacks may reach (callback-address-policy.ts). */
  policy: CallbackAddressPolicy;
  logger: Logger;
  /** Only tests replace it; the worker resolves with the system resolver. */
  resolver?: Resolver;
  /** This process's callbacks in flight per receiver host (callback-host-slots.ts); none: no cap. */
  hostSlots?: CallbackHostSlots;
  /** This process's circuit breaker per receiver host (callback-circuits.ts); none: always sent. */
  circuits?: CallbackCircuits;
}

export type CallbackOutcome = 'sent' | 'refused' | 'already-done' | 'no-callback' | 'missing';

export class CallbackNotReadyError extends Error {}
export class CallbackSecretMissingError extends Error {}

/**
 * Sends the final state of one notification to its callbackUrl, signed with the creating client's
 * callback secret (read at send time, so a rotation applies to retries). Throws for BullMQ to
 * retry; `giveUp` marks it FAILED after the last attempt. A callback whose address is not allowed
 * is FAILED at once: retrying cannot make an internal address public, and each retry would be one
 * more attempt to reach it.
 */
export function createCallbackDelivery(deps: CallbackDeliveryDeps) {
  const log = deps.logger.child({ component: 'notification-callbacks' });
  /** Throws CallbackHostBusyError when this receiver already holds its share of the slots; no request then. */
  function takeHostSlot(receiver: CallbackReceiver, attempt: CallbackTry | undefined): (() => void) | undefined {
    try {
      return deps.hostSlots?.take(receiver);
    } catch (err) {
      attempt?.abandoned();
      throw err;
    }
  }
  return {
    async deliver(notificationUuid: string): Promise<CallbackOutcome> {
      const n = await deps.repository.find(notificationUuid);
      if (!n) return 'missing';
      if (!n.callbackUrl) return 'no-callback';
      if (n.callbackState !== 'WAITING') return 'already-done';
      if (!isFinal(n.status)) throw new CallbackNotReadyError('notification not ended yet');
      const secret = await readCallbackSecret(deps.clients, n.clientId, deps.encryptionKey);
      if (secret === null)
        throw new CallbackSecretMissingError('the client has no callback secret (deleted client, or created without one: rotate one)');
      const host = new URL(n.callbackUrl).host;
      // Per enterprise and host: another enterprise's callbacks to the same host cannot hold these back.
      const receiver = { enterpriseId: n.enterpriseId, host };
      // Throws CallbackCircuitOpenError while this receiver is held back after failing in a row.
      const attempt = deps.circuits?.admit(receiver);
      const release = takeHostSlot(receiver, attempt);
      try {
        await postCallback(n.callbackUrl, JSON.stringify(callbackPayload(n)), secret, {
          policy: deps.policy,
          timeoutMs: deps.timeoutMs,
          ...(deps.resolver ? { resolver: deps.resolver } : {}),
        });
        attempt?.answered();
      } catch (err) {
        if (!(err instanceof CallbackAddressRefusedError)) {
          if (isReceiverFailure(err)) attempt?.failed();
          else attempt?.answered();
          throw err;
        }
        attempt?.abandoned();
        await deps.repository.setCallbackState(notificationUuid, 'FAILED');
        log.warn(
          { notificationUuid, clientId: n.clientId, callbackHost: host, reason: err.reason },
          'callback refused: its address is not allowed; marked FAILED, not retried',
        );
        return 'refused';
      } finally {
        release?.();
      }
      await deps.repository.setCallbackState(notificationUuid, 'SENT');
      return 'sent';
    },

    async giveUp(notificationUuid: string): Promise<void> {
      await deps.repository.setCallbackState(notificationUuid, 'FAILED');
    },
  };
}

export type CallbackDelivery = ReturnType<typeof createCallbackDelivery>;
