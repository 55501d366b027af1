import { AppError, NotFoundError } from '../platform/errors/app-error.js';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { createDeliveryReader } from '../deliveries/delivery-reader.js';
import {
  failoverDeliveryId,
  originalDeliveryId,
  otpDeliveryIds,
  otpResendDeliveryId,
  type Delivery,
} from '../deliveries/delivery.types.js';
import type { SentJournal } from '../deliveries/sent-journal.js';
import { verifyOtp } from './otp-digest.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { HashSpec } from './otp.types.js';
import type { OtpRecord, OtpsRepository } from './otps.repository.js';
import { otpValidations } from '../platform/metrics/business-metrics.js';

export interface OtpValidationDeps {
  otps: OtpsRepository;
  deliveries: Pick<DeliveriesRepository, 'findByRef'>;
  /** Sends a dispatch worker journaled that the rows may not show for a few milliseconds yet. */
  sentJournal: Pick<SentJournal, 'find'>;
  keys: OtpKeys;
  /** Signs a short-lived JWT with the authorization server's key. */
  signOtpJwt: (claims: { sub: string; jti: string; clientId: string }) => Promise<string>;
  now?: () => Date;
}

export type OtpPublicStatus = 'ACTIVE' | 'USED' | 'EXPIRED' | 'LOCKED' | 'CANCELLED';

/** The state callers see: stored ends first, then exhausted attempts, then expiry. */
export function publicStatus(record: OtpRecord, now: Date): OtpPublicStatus {
  if (record.status === 'USED') return 'USED';
  if (record.status === 'CANCELLED') return 'CANCELLED';
  if (record.status === 'LOCKED' || record.attemptsUsed >= record.attempts) return 'LOCKED';
  if (record.expiresAt.getTime() <= now.getTime()) return 'EXPIRED';
  return 'ACTIVE';
}

/** The validation outcome as an error whose body carries `otpUuid` and `status` (the OTP's state). */
export function outcomeError(
  status: number,
  otpUuid: string,
  otpStatus: string,
  message: string,
  extra: Record<string, unknown> = {},
): AppError {
  return new AppError(`OTP_${otpStatus}`, status, message, { extra: { otpUuid, status: otpStatus, ...extra } });
}

export function createOtpValidationService(deps: OtpValidationDeps) {
  const now = deps.now ?? (() => new Date());

  async function explainRefusal(otpUuid: string, clientId: string, at: Date): Promise<never> {
    const record = await deps.otps.findForClient(otpUuid, clientId);
    if (!record) throw new NotFoundError('OTP not found');
    switch (publicStatus(record, at)) {
      case 'USED':
        throw outcomeError(409, otpUuid, 'USED', 'OTP already used');
      case 'EXPIRED':
        throw outcomeError(410, otpUuid, 'EXPIRED', 'OTP expired');
      // Gone for good, like an expired OTP: the right code is refused too.
      case 'CANCELLED':
        throw outcomeError(410, otpUuid, 'CANCELLED', 'OTP cancelled');
      default:
        throw outcomeError(423, otpUuid, 'LOCKED', 'OTP locked: no attempts left');
    }
  }

  const reader = createDeliveryReader({ journal: deps.sentJournal, deliveries: deps.deliveries });

  /** Every message of the OTP: its first ones, each resend's, and the failover rows of any of them. */
  function deliveryRows(record: OtpRecord): Promise<Delivery[]> {
    const ids = otpDeliveryIds(record.otpUuid, record.channels, record.resends);
    return reader.byRef(record.otpUuid, [...ids, ...ids.flatMap((id) => [failoverDeliveryId(id, 1), failoverDeliveryId(id, 2)])]);
  }

  async function checkCode(otpUuid: string, clientId: string, code: string): Promise<{ otpUuid: string; status: 'SUCCESS'; jwt?: string }> {
    const at = now();
    const record = await deps.otps.takeAttempt(otpUuid, clientId, at);
    if (!record) return explainRefusal(otpUuid, clientId, at);
    if (!verifyOtp(code, record.digest, record.hashSpec as HashSpec, deps.keys)) {
      const attemptsLeft = Math.max(record.attempts - record.attemptsUsed, 0);
      if (attemptsLeft === 0) await deps.otps.lockIfExhausted(otpUuid);
      throw outcomeError(422, otpUuid, 'FAILED', 'Invalid OTP', { attemptsLeft });
    }
    if (!(await deps.otps.markUsed(otpUuid, at))) return explainRefusal(otpUuid, clientId, at);
    if (!record.generateJwt) return { otpUuid, status: 'SUCCESS' };
    return { otpUuid, status: 'SUCCESS', jwt: await deps.signOtpJwt({ sub: record.userId, jti: otpUuid, clientId }) };
  }

  return {
    async validate(otpUuid: string, clientId: string, code: string): Promise<{ otpUuid: string; status: 'SUCCESS'; jwt?: string }> {
      try {
        const result = await checkCode(otpUuid, clientId, code);
        otpValidations.inc({ outcome: result.status });
        return result;
      } catch (err) {
        // Refusals carry the OTP's state (FAILED, LOCKED, EXPIRED, USED, CANCELLED); an unknown uuid carries none.
        const status = err instanceof AppError ? err.extra.status : undefined;
        if (typeof status === 'string') otpValidations.inc({ outcome: status });
        throw err;
      }
    },

    async status(otpUuid: string, clientId: string) {
      const record = await deps.otps.findForClient(otpUuid, clientId);
      if (!record) throw new NotFoundError('OTP not found');
      const deliveries = await deliveryRows(record);
      // Rows of the n-th resend say so (`resend: n`); the first messages carry no number.
      const resendOf = new Map(
        (record.resends ?? []).flatMap((resendId, i) =>
          record.channels.map((channel) => [otpResendDeliveryId(otpUuid, channel, resendId), i + 1] as const),
        ),
      );
      return {
        otpUuid,
        userId: record.userId,
        status: publicStatus(record, now()),
        attemptsLeft: Math.max(record.attempts - record.attemptsUsed, 0),
        expiresAt: record.expiresAt.toISOString(),
        createdAt: record.createdAt.toISOString(),
        ...(record.msgId !== undefined ? { msgId: record.msgId } : {}),
        deliveries: deliveries.map((d) => ({
          channel: d.channel,
          ...(resendOf.has(originalDeliveryId(d.id)) ? { resend: resendOf.get(originalDeliveryId(d.id)) } : {}),
          ...(d.failover !== undefined ? { failover: d.failover } : {}),
          ...(d.provider ? { provider: d.provider } : {}),
          state: d.state,
          ...(d.providerMessageId ? { providerMessageId: d.providerMessageId } : {}),
          ...(d.lastError ? { lastError: d.lastError } : {}),
          updatedAt: d.updatedAt.toISOString(),
        })),
      };
    },
  };
}

export type OtpValidationService = ReturnType<typeof createOtpValidationService>;
