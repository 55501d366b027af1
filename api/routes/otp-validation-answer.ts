import { GoneError, LockedError, NotFoundError, ValidationError } from '../../core/platform/errors/app-error.js';
import { otpEnded, type OtpCheck } from '../../core/otp/otp-validation.service.js';

/**
 * The enterprise answer to a code check (`POST /v1/svc-otp/{otpUuid}/validate`): the success
 * body, or a refusal whose body carries `otpUuid` and `status` (the OTP's state) so the app can
 * tell a wrong code from an OTP that will never take one.
 */
export function validationAnswer(check: OtpCheck): { otpUuid: string; status: 'SUCCESS'; jwt?: string } {
  const { otpUuid } = check;
  switch (check.kind) {
    case 'valid':
      return check.jwt === undefined ? { otpUuid, status: 'SUCCESS' } : { otpUuid, status: 'SUCCESS', jwt: check.jwt };
    case 'wrong':
      throw new ValidationError('Invalid OTP', {
        code: 'OTP_FAILED',
        extra: { otpUuid, status: 'FAILED', attemptsLeft: check.attemptsLeft },
      });
    case 'unknown':
      throw new NotFoundError('OTP not found');
    case 'ended':
      switch (check.status) {
        case 'USED':
          throw otpEnded(otpUuid, 'USED', 'OTP already used');
        case 'EXPIRED':
          throw new GoneError('OTP_EXPIRED', 'OTP expired', { extra: { otpUuid, status: 'EXPIRED' } });
        // Gone for good, like an expired OTP: the right code is refused too.
        case 'CANCELLED':
          throw new GoneError('OTP_CANCELLED', 'OTP cancelled', { extra: { otpUuid, status: 'CANCELLED' } });
        case 'LOCKED':
          throw new LockedError('OTP_LOCKED', 'OTP locked: no attempts left', { extra: { otpUuid, status: 'LOCKED' } });
      }
  }
}
