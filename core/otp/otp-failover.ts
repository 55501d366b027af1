import type { Logger } from '../platform/logger/logger.js';
import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import { deliveryFailovers } from '../platform/metrics/business-metrics.js';
import { resendCodeContext } from './otp-resend.service.js';
import type { OtpRecord, OtpsRepository } from './otps.repository.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import { OTP_MACRO } from '../templates/template-macros.js';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { failoverDeliveryId, originalDeliveryId, type Delivery, type FailoverStep } from '../deliveries/delivery.types.js';

/** Why a message ended FAILED: its account (outage, refusal, carrier receipt) or its recipient (invalid number). */
export type FailureCause = 'provider' | 'recipient';

export interface DeliveryFailoverDeps {
  deliveries: Pick<DeliveriesRepository, 'findById' | 'insertMany'>;
  otps: Pick<OtpsRepository, 'findInEnterprise'>;
  /** Whether the channel has a second account (only SMS can). */
  hasSecondary: (channel: Delivery['channel']) => boolean;
  encryptionKey: Buffer;
  enqueue: (deliveryId: string) => Promise<void>;
  logger: Logger;
  now?: () => Date;
}

/** Still usable: a code nobody can enter any more is not worth a message. */
const stillActive = (record: OtpRecord, now: Date) =>
  record.status === 'ACTIVE' && record.expiresAt.getTime() > now.getTime() && record.attemptsUsed < record.attempts;

/**
 * When an OTP's message ends FAILED (a permanent send error, retries used up, or a receipt saying
 * failed/undelivered), the code goes out once more by the next way left, while the OTP is still
 * ACTIVE: step 1, the same channel through its other account (not for a recipient's problem,
 * which another account repeats); step 2, the request's fallback channel. Each step has one
 * row with an id derived from the failed message, so a repeated trigger (a receipt sent twice, a
 * retried job) inserts and queues nothing new; a failed step-1 row leads to step 2, never back.
 */
export function createDeliveryFailover(deps: DeliveryFailoverDeps) {
  const now = deps.now ?? (() => new Date());

  function nextStep(failed: Delivery, record: OtpRecord, cause: FailureCause): FailoverStep | undefined {
    const done = failed.failover ?? 0;
    // A test client's messages never reach an account, so only the fallback channel applies.
    if (done < 1 && cause === 'provider' && !failed.test && deps.hasSecondary(failed.channel)) return 1;
    if (done < 2 && record.fallback !== undefined && record.fallback.channel !== failed.channel) return 2;
    return undefined;
  }

  function rowFor(failed: Delivery, record: OtpRecord, step: FailoverStep, code: string, at: Date): Delivery {
    const id = failoverDeliveryId(originalDeliveryId(failed.id), step);
    const fallback = record.fallback;
    const target =
      step === 2 && fallback
        ? { channel: fallback.channel, to: fallback.to, template: fallback.template }
        : // The other account than the one that failed (the breakers may have sent it through the secondary).
          {
            channel: failed.channel,
            to: failed.to,
            template: failed.template,
            route: failed.provider?.endsWith('-secondary') ? 'primary' : 'secondary',
          };
    return {
      id,
      kind: 'otp',
      enterpriseId: failed.enterpriseId,
      refId: failed.refId,
      ...target,
      // A test OTP's failover stays a test message (the outbox, simulated receipts).
      ...(failed.test ? { test: true } : {}),
      failover: step,
      macros: { ...failed.macros },
      secretMacros: encryptSecret(JSON.stringify({ [OTP_MACRO]: code }), deps.encryptionKey, id),
      state: 'QUEUED',
      attempts: 0,
      notAfter: record.expiresAt,
      queuedAt: at,
      updatedAt: at,
    } as Delivery;
  }

  return {
    /** The failover row written and queued for `failed`, or undefined when there is no way left. */
    async failOver(failed: Delivery, cause: FailureCause): Promise<Delivery | undefined> {
      if (failed.kind !== 'otp') return undefined;
      const at = now();
      const record = await deps.otps.findInEnterprise(failed.refId, { enterpriseId: failed.enterpriseId ?? DEFAULT_ENTERPRISE_ID });
      if (!record || !stillActive(record, at) || record.resendCode === undefined) return undefined;
      const step = nextStep(failed, record, cause);
      if (step === undefined) return undefined;
      const code = decryptSecret(record.resendCode, deps.encryptionKey, resendCodeContext(record.otpUuid));
      const row = rowFor(failed, record, step, code, at);
      // Upsert: a repeated trigger leaves the existing row (and its state) as it is.
      await deps.deliveries.insertMany([row]);
      try {
        await deps.enqueue(row.id);
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message, deliveryId: row.id }, 'failover enqueue failed; left for the sweeper');
      }
      deliveryFailovers.inc({ channel: failed.channel, via: step === 1 ? 'account' : 'channel' });
      deps.logger.info({ deliveryId: failed.id, failoverId: row.id, step, cause }, 'delivery failed over');
      return row;
    },
  };
}

export type DeliveryFailover = ReturnType<typeof createDeliveryFailover>;

/** The failover of one process, on its own stores and dispatch queue. */
export function deliveryFailoverOn(
  stores: { deliveries: DeliveryFailoverDeps['deliveries']; otps: DeliveryFailoverDeps['otps'] },
  config: { twilio?: unknown; twilioSecondary?: unknown },
  encryptionKey: Buffer,
  enqueue: (deliveryId: string) => Promise<void>,
  logger: Logger,
): DeliveryFailover {
  const smsSecondary = config.twilio !== undefined && config.twilioSecondary !== undefined;
  return createDeliveryFailover({
    ...stores,
    hasSecondary: (channel) => channel === 'SMS' && smsSecondary,
    encryptionKey,
    enqueue,
    logger: logger.child({ component: 'delivery-failover' }),
  });
}
