import { DEFAULT_ENTERPRISE_ID, userSubject, type UserRef } from '../platform/tenancy/enterprise-id.js';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import type { Channel, Delivery } from '../deliveries/delivery.types.js';
import type { Logger } from '../platform/logger/logger.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import { activationLink } from './activation-link.js';
import type { UsersRepository } from './users.repository.js';

export const ACTIVATION_TEMPLATES: Record<Channel, string> = { EMAIL: 'activation_email', SMS: 'activation_sms' };

const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64url');

/**
 * userId may hold `@`, which delivery ids (dispatch job ids) do not allow: base64url it. Users of
 * the default enterprise keep the id they had before enterprises existed (no `.`); others add
 * the enterprise before a `.` (not in the base64url alphabet), so ids never collide. The logger
 * masks the userId part of these ids on every line (core/platform/logger/ids-with-user-ids.ts):
 * a change of this format changes that pattern too.
 */
export const activationDeliveryId = (ref: UserRef, issue: number, channel: Channel) =>
  `activation-${ref.enterpriseId === DEFAULT_ENTERPRISE_ID ? '' : `${b64(ref.enterpriseId)}.`}${b64(ref.userId)}-${issue}-${channel}`;

export interface ActivationDeliveriesDeps {
  users: Pick<UsersRepository, 'findUser' | 'clearActivationCode'>;
  deliveries: Pick<DeliveriesRepository, 'insertMany' | 'findByRef'>;
  /**
   * Queues one dispatch job, with a priority when given (dispatch-fairness.ts); failures are
   * tolerated (the dispatch sweeper re-enqueues, without a priority).
   */
  enqueueDispatch: (deliveryId: string, priority?: number) => Promise<void>;
  keys: OtpKeys;
  /** The app page activation links open (config activationAppUrl). */
  activationAppUrl: string;
  logger: Logger;
  now?: () => Date;
}

/**
 * The enrollment job's work: writes one activation delivery per address of the user (code and
 * verification key encrypted for that row), drops the user's encrypted code, and queues the
 * dispatch jobs. Each step is idempotent, so a retried job or a repeat after a crash is safe;
 * a superseded issue (an admin re-issued meanwhile) sends nothing. `priority`: the dispatch
 * priority of the enrollment's messages (none: first-come-first-served; see docs/operations.md for
 * who gets one).
 */
export function createActivationDeliveries(deps: ActivationDeliveriesDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async prepareAndQueue(ref: UserRef, issue: number, priority?: number): Promise<{ queued: string[] }> {
      const user = await deps.users.findUser(ref);
      const subject = userSubject(ref);
      const activation = user?.activation;
      if (!user || !activation || activation.issue !== issue) return { queued: [] };

      if (activation.codeEncrypted) {
        const code = decryptSecret(activation.codeEncrypted, deps.keys.encryptionKey, `${subject}:${issue}`);
        const verificationKey = decryptSecret(activation.verificationKeyEncrypted, deps.keys.encryptionKey, subject);
        const addresses: [Channel, string | undefined][] = [
          ['EMAIL', user.emailId],
          ['SMS', user.mobileNumber],
        ];
        const at = now();
        const rows: Delivery[] = addresses
          .filter((entry): entry is [Channel, string] => entry[1] !== undefined)
          .map(([channel, to]) => {
            const id = activationDeliveryId(ref, issue, channel);
            return {
              id,
              kind: 'activation',
              enterpriseId: ref.enterpriseId,
              refId: ref.userId,
              channel,
              to,
              template: ACTIVATION_TEMPLATES[channel],
              // The enterprise and user id are shown too, for a person typing them into an app.
              macros: { __FIRST_NAME__: user.firstName, __ENTERPRISE_ID__: ref.enterpriseId, __USER_ID__: ref.userId },
              secretMacros: encryptSecret(
                JSON.stringify({
                  __ACTIVATION_CODE__: code,
                  __VERIFICATION_KEY__: verificationKey,
                  __ACTIVATION_LINK__: activationLink(deps.activationAppUrl, ref, code),
                }),
                deps.keys.encryptionKey,
                id,
              ),
              state: 'QUEUED',
              attempts: 0,
              notAfter: activation.expiresAt,
              queuedAt: at,
              updatedAt: at,
            };
          });
        await deps.deliveries.insertMany(rows);
        await deps.users.clearActivationCode(ref, issue);
      }

      const prefix = activationDeliveryId(ref, issue, 'EMAIL').replace(/EMAIL$/, '');
      const rows = (await deps.deliveries.findByRef(ref.userId)).filter((d) => d.id.startsWith(prefix) && d.state === 'QUEUED');
      const queued: string[] = [];
      for (const row of rows) {
        try {
          await deps.enqueueDispatch(row.id, priority);
          queued.push(row.id);
        } catch (err) {
          // The row stays QUEUED; the dispatch worker's sweeper enqueues it once Redis is back.
          deps.logger.warn({ err: (err as Error).message, deliveryId: row.id }, 'dispatch enqueue failed; left for the sweeper');
        }
      }
      return { queued };
    },
  };
}

export type ActivationDeliveries = ReturnType<typeof createActivationDeliveries>;
