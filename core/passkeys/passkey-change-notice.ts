import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Channel, Delivery } from '../deliveries/delivery.types.js';
import type { Logger } from '../platform/logger/logger.js';
import type { User } from '../users/user.types.js';
import type { Passkey } from './passkeys.repository.js';

/** What happened to the passkey the user is told about. */
export type PasskeyChange = 'added' | 'removed';

export const PASSKEY_NOTICE_TEMPLATES: Record<PasskeyChange, Record<Channel, string>> = {
  added: { EMAIL: 'passkey_added_email', SMS: 'passkey_added_sms' },
  removed: { EMAIL: 'passkey_removed_email', SMS: 'passkey_removed_sms' },
};

/** The macro of the moment of the change, in each change's templates. */
const MOMENT_MACRO: Record<PasskeyChange, string> = { added: '__ADDED_AT__', removed: '__REMOVED_AT__' };

/** How long after the change its notice may still go out (and an operator replay it). */
export const PASSKEY_NOTICE_SENDING_WINDOW_MS = 24 * 60 * 60 * 1000;

/** One notice per change of a passkey: a retried write or enqueue finds the same row and job. */
export const passkeyNoticeDeliveryId = (change: PasskeyChange, passkeyId: string, channel: Channel) =>
  `notice-passkey-${change}-${passkeyId}-${channel}`;

export interface PasskeyChangeNoticeDeps {
  deliveries: Pick<DeliveriesRepository, 'insertMany'>;
  /** Queues one dispatch job; failures are tolerated (the dispatch sweeper queues QUEUED rows). */
  enqueueDispatch: (deliveryId: string) => Promise<void>;
  logger: Logger;
}

/**
 * Tells the user a passkey was added to or removed from their account (OWASP ASVS: notify users
 * of changes to how they authenticate), so a passkey added, or one taken away, by someone holding
 * a stolen session does not go unseen. By e-mail, or by SMS to a user without an address. Nothing
 * secret is in it, so an operator can replay a failed one. The change is stored already: a notice
 * that cannot be written is logged rather than failing the request, and the activity record names
 * the passkey either way.
 */
export function createPasskeyChangeNotice(deps: PasskeyChangeNoticeDeps) {
  return {
    async send(change: PasskeyChange, user: User, passkey: Pick<Passkey, 'id' | 'name'>, at: Date): Promise<void> {
      const [channel, to]: [Channel, string | undefined] =
        user.emailId !== undefined ? ['EMAIL', user.emailId] : ['SMS', user.mobileNumber];
      if (to === undefined) return;
      const id = passkeyNoticeDeliveryId(change, passkey.id, channel);
      const row: Delivery = {
        id,
        kind: 'notice',
        enterpriseId: user.enterpriseId,
        refId: user.userId,
        channel,
        to,
        template: PASSKEY_NOTICE_TEMPLATES[change][channel],
        macros: {
          __FIRST_NAME__: user.firstName,
          __PASSKEY_NAME__: passkey.name,
          [MOMENT_MACRO[change]]: `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
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
        deps.logger.error({ err: (err as Error).message, passkeyId: passkey.id, change }, 'passkey notice not written');
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

export type PasskeyChangeNotice = ReturnType<typeof createPasskeyChangeNotice>;
