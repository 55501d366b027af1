import type { Logger } from '../platform/logger/logger.js';
import type { OtpsRepository } from './otps.repository.js';

/** How far back the first sweep of a process looks (a dispatch worker that was down a while). */
const FIRST_LOOK_BACK_MS = 24 * 3600 * 1000;
/** Each sweep also looks this far before the previous one: clocks of hosts and late writes. */
const OVERLAP_MS = 60 * 1000;

/**
 * Drops the encrypted resend copy of codes whose OTP expired, so a code that can no longer be
 * used does not stay stored until the record itself is purged (7 days after expiry). Used,
 * locked and cancelled OTPs drop theirs at once; only expiry happens without a request.
 */
export function createResendCodeSweeper(otps: Pick<OtpsRepository, 'dropExpiredResendCodes'>, logger: Logger) {
  let since: Date | undefined;
  return async (now = new Date()): Promise<number> => {
    const from = since ?? new Date(now.getTime() - FIRST_LOOK_BACK_MS);
    const dropped = await otps.dropExpiredResendCodes(from, now);
    since = new Date(now.getTime() - OVERLAP_MS);
    if (dropped > 0) logger.info({ dropped }, 'resend codes of expired OTPs dropped');
    return dropped;
  };
}
