import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import type { OtpsRepository } from './otps.repository.js';
import { otpEnded, publicStatus, type OtpValidationService } from './otp-validation.service.js';

export interface OtpCancellationDeps {
  otps: Pick<OtpsRepository, 'cancel' | 'findForClient' | 'cancelActiveOfUser'>;
  deliveries: Pick<DeliveriesRepository, 'cancelQueued'>;
  /** The answer: the OTP's state as `GET /v1/svc-otp/{otpUuid}` shows it. */
  status: OtpValidationService['status'];
  logger: Logger;
  now?: () => Date;
}

/**
 * Cancels an OTP: it can no longer be validated nor resent, and its messages still waiting are
 * not sent. The dispatch worker reads the OTP's status right before each send, so a message
 * whose job is already waiting is stopped there even if ending its row below fails.
 */
export function createOtpCancellationService(deps: OtpCancellationDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    /**
     * 200 with the state when this call or an earlier one cancelled it (a retry is safe); 409 with
     * the OTP's state when it had already ended otherwise (USED, EXPIRED, LOCKED); 404 unknown.
     */
    async cancel(otpUuid: string, clientId: string) {
      const at = now();
      const cancelled = await deps.otps.cancel(otpUuid, clientId, at);
      const record = cancelled ?? (await deps.otps.findForClient(otpUuid, clientId));
      if (!record) throw new NotFoundError('OTP not found');
      const status = publicStatus(record, at);
      if (status !== 'CANCELLED') throw otpEnded(otpUuid, status, `OTP already ended: ${status}`);
      // Also on a repeated cancel: it finishes what a cancel cut short by a failure left QUEUED.
      await deps.deliveries.cancelQueued(record, [otpUuid], at);
      if (cancelled) deps.logger.info({ otpUuid }, 'OTP cancelled');
      return deps.status(otpUuid, clientId);
    },

    /**
     * A blocked or deleted user is sent no code and validates none: their pending OTPs (and login
     * codes) end CANCELLED and their waiting messages end unsent, as a cancel of each would.
     */
    async cancelAllOfUser(ref: UserRef): Promise<void> {
      const at = now();
      const otpUuids = await deps.otps.cancelActiveOfUser(ref, at);
      if (otpUuids.length > 0) await deps.deliveries.cancelQueued(ref, otpUuids, at);
      if (otpUuids.length > 0) deps.logger.info({ otps: otpUuids.length }, 'OTPs of a blocked or deleted user cancelled');
    },
  };
}

export type OtpCancellationService = ReturnType<typeof createOtpCancellationService>;
