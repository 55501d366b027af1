import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import type { StillWantedCheck } from '../deliveries/delivery-replay.types.js';
import type { OtpsRepository } from './otps.repository.js';

/**
 * An OTP's message is worth sending again only while the OTP can still be validated: ACTIVE,
 * with attempts left, unexpired. Looked up within the delivery's enterprise.
 */
export function otpStillWanted(otps: Pick<OtpsRepository, 'findInEnterprise'>): StillWantedCheck {
  return async (delivery, now) => {
    const otp = await otps.findInEnterprise(delivery.refId, { enterpriseId: delivery.enterpriseId ?? DEFAULT_ENTERPRISE_ID });
    if (!otp) return { code: 'ended', reason: 'Its OTP no longer exists.' };
    if (otp.status === 'USED') return { code: 'ended', reason: 'Its OTP was used.' };
    if (otp.status === 'CANCELLED') return { code: 'ended', reason: 'Its OTP was cancelled.' };
    if (otp.status === 'LOCKED' || otp.attemptsUsed >= otp.attempts)
      return { code: 'ended', reason: 'Its OTP is locked: no attempts left.' };
    if (otp.expiresAt.getTime() <= now.getTime()) return { code: 'expired', reason: `Its OTP expired at ${otp.expiresAt.toISOString()}.` };
    return undefined;
  };
}
