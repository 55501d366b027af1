import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import type { StillWantedCheck } from '../deliveries/delivery-replay.types.js';
import { isUserBlocked, type UserFinder } from '../users/user-reachability.js';
import type { OtpsRepository } from './otps.repository.js';

/**
 * An OTP's message is worth sending again only while the OTP can still be validated (ACTIVE, with
 * attempts left, unexpired) and its user may still be sent codes: a user blocked since (a lost
 * phone) or deleted since is sent nothing, as a new OTP or login code for them would not be.
 * Looked up within the delivery's enterprise.
 */
export function otpStillWanted(otps: Pick<OtpsRepository, 'findInEnterprise'>, users: UserFinder): StillWantedCheck {
  return async (delivery, now) => {
    const enterpriseId = delivery.enterpriseId ?? DEFAULT_ENTERPRISE_ID;
    const otp = await otps.findInEnterprise(delivery.refId, { enterpriseId });
    if (!otp) return { code: 'ended', reason: 'Its OTP no longer exists.' };
    if (otp.status === 'USED') return { code: 'ended', reason: 'Its OTP was used.' };
    if (otp.status === 'CANCELLED') return { code: 'ended', reason: 'Its OTP was cancelled.' };
    if (otp.status === 'LOCKED' || otp.attemptsUsed >= otp.attempts)
      return { code: 'ended', reason: 'Its OTP is locked: no attempts left.' };
    if (otp.expiresAt.getTime() <= now.getTime()) return { code: 'expired', reason: `Its OTP expired at ${otp.expiresAt.toISOString()}.` };
    const user = await users.findUser({ enterpriseId, userId: otp.userId });
    if (!user || user.status === 'DELETED') return { code: 'ended', reason: 'Its user was deleted.' };
    if (isUserBlocked(user)) return { code: 'ended', reason: 'Its user is blocked.' };
    return undefined;
  };
}
