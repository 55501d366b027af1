import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
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
import type { OtpJwtClaims } from './otp-jwt.js';
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
  signOtpJwt: (claims: OtpJwtClaims) => Promise<string>;
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

/**
 * What checking a code found: the right code (with the JWT asked for), a wrong one (and the
 * attempts left), or an OTP that no longer takes codes (and why). Each caller turns it into its
 * own answer: the enterprise route into its refusals, sign-in into its pages.
 */
export type OtpCheck =
  | { kind: 'valid'; otpUuid: string; jwt?: string }
  | { kind: 'wrong'; otpUuid: string; attemptsLeft: number }
  | { kind: 'ended'; otpUuid: string; status: Exclude<OtpPublicStatus, 'ACTIVE'> }
  | { kind: 'unknown'; otpUuid: string };

/** The OTP already ended otherwise (used, expired, locked, cancelled): a conflict carrying its state. */
export function otpEnded(otpUuid: string, status: OtpPublicStatus, message: string): ConflictError {
  return new ConflictError(message, { code: `OTP_${status}`, extra: { otpUuid, status } });
}

/** The state of an OTP that refused to take an attempt: one that still reads ACTIVE had no attempt left for it, so it is locked. */
function endedStatus(status: OtpPublicStatus): Exclude<OtpPublicStatus, 'ACTIVE'> {
  return status === 'ACTIVE' ? 'LOCKED' : status;
}

export function createOtpValidationService(deps: OtpValidationDeps) {
  const now = deps.now ?? (() => new Date());

  async function explainRefusal(otpUuid: string, clientId: string, at: Date): Promise<OtpCheck> {
    const record = await deps.otps.findForClient(otpUuid, clientId);
    if (!record) return { kind: 'unknown', otpUuid };
    return { kind: 'ended', otpUuid, status: endedStatus(publicStatus(record, at)) };
  }

  const reader = createDeliveryReader({ journal: deps.sentJournal, deliveries: deps.deliveries });

  /** Every message of the OTP: its first ones, each resend's, and the failover rows of any of them. */
  function deliveryRows(record: OtpRecord): Promise<Delivery[]> {
    const ids = otpDeliveryIds(record.otpUuid, record.channels, record.resends);
    return reader.byRef(record.otpUuid, [...ids, ...ids.flatMap((id) => [failoverDeliveryId(id, 1), failoverDeliveryId(id, 2)])]);
  }

  async function checkCode(otpUuid: string, clientId: string, code: string): Promise<OtpCheck> {
    const at = now();
    const record = await deps.otps.takeAttempt(otpUuid, clientId, at);
    if (!record) return explainRefusal(otpUuid, clientId, at);
    if (!verifyOtp(code, record.digest, record.hashSpec as HashSpec, deps.keys)) {
      const attemptsLeft = Math.max(record.attempts - record.attemptsUsed, 0);
      if (attemptsLeft === 0) await deps.otps.lockIfExhausted(otpUuid);
      return { kind: 'wrong', otpUuid, attemptsLeft };
    }
    if (!(await deps.otps.markUsed(otpUuid, at))) return explainRefusal(otpUuid, clientId, at);
    if (!record.generateJwt) return { kind: 'valid', otpUuid };
    return {
      kind: 'valid',
      otpUuid,
      jwt: await deps.signOtpJwt({ sub: record.userId, enterpriseId: record.enterpriseId, jti: otpUuid, clientId }),
    };
  }

  /** The outcomes counted: the OTP's state a refusal ends in (FAILED for a wrong code); an unknown uuid counts nothing. */
  const metricOutcome = (check: OtpCheck): string | undefined =>
    check.kind === 'valid' ? 'SUCCESS' : check.kind === 'wrong' ? 'FAILED' : check.kind === 'ended' ? check.status : undefined;

  return {
    async validate(otpUuid: string, clientId: string, code: string): Promise<OtpCheck> {
      const check = await checkCode(otpUuid, clientId, code);
      const outcome = metricOutcome(check);
      if (outcome !== undefined) otpValidations.inc({ outcome });
      return check;
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
