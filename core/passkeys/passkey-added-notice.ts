import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Channel, Delivery } from '../deliveries/delivery.types.js';
import type { Logger } from '../platform/logger/logger.js';
import type { User } from '../users/user.types.js';
import type { Passkey } from './passkeys.repository.js';

export const PASSKEY_ADDED_TEMPLATES: Record<Channel, string> = { EMAIL: 'passkey_added_email', SMS: 'passkey_added_sms' };

/** How long after the passkey was added its notice may still go out (and an operator replay it). */
export const PASSKEY_NOTICE_SENDING_WINDOW_MS = 24 * 60 * 60 * 1000;

/** One notice per passkey: a retried write or enqueue finds the same row and job. */
export const passkeyAddedDeliveryId = (passkeyId: string, channel: Channel) => `notice-passkey-added-${passkeyId}-${channel}`;

export interface PasskeyAddedNoticeDeps {
  deliveries: Pick<DeliveriesRepository, 'insertMany'>;
  /** Queues one dispatch job; failures are tolerated (the dispatch sweeper queues QUEUED rows). */
  enqueueDispatch: (deliveryId: string) => Promise<void>;
  logger: Logger;
}

/**
 * Tells the user a passkey was added to their account (OWASP ASVS: notify users of changes to
 * how they authenticate), so a passkey added by someone holding a stolen session does not go
 * unseen. By e-mail, or by SMS to a user without an address. Nothing secret is in it, so an
 * operator can replay a failed one. The passkey is stored already: a notice that cannot be
 * written is logged rather than failing the registration, and the activity record names the
 * passkey either way.
 */
export function createPasskeyAddedNotice(deps: PasskeyAddedNoticeDeps) {
  return {
    async send(user: User, passkey: Passkey): Promise<void> {
      const [channel, to]: [Channel, string | undefined] =
        user.emailId !== undefined ? ['EMAIL', user.emailId] : ['SMS', user.mobileNumber];
      if (to === undefined) return;
      const id = passkeyAddedDeliveryId(passkey.id, channel);
      const at = passkey.createdAt;
      const row: Delivery = {
        id,
        kind: 'notice',
        enterpriseId: user.enterpriseId,
        refId: user.userId,
        channel,
        to,
        template: PASSKEY_ADDED_TEMPLATES[channel],
        macros: {
          __FIRST_NAME__: user.firstName,
          __PASSKEY_NAME__: passkey.name,
          __ADDED_AT__: `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
        },
        state: 'QUEUED',
        attempts: 0,
        notAfter: new Date(at.getTime() + PASSKEY_NOTICE_SENDING_WINDOW_MS),
        queuedAt: at,
        updatedAt: at,
      };
      try {
        await deps.deliveries.insertMany([row]);
      } catch (err) {
        deps.logger.error({ err: (err as Error).message, passkeyId: passkey.id }, 'passkey-added notice not written');
        return;
      }
      try {
        await deps.enqueueDispatch(id);
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message, deliveryId: id }, 'dispatch enqueue failed; left for the sweeper');
      }
    },
  };
}

export type PasskeyAddedNotice = ReturnType<typeof createPasskeyAddedNotice>;
