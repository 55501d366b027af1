import { decryptSecret } from '../crypto/secret-box.js';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { otpDeliveryId } from '../deliveries/delivery.types.js';
import { ConflictError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { OtpRecord } from './otps.repository.js';

export interface ParkedCodeDeps {
  deliveries: Pick<DeliveriesRepository, 'findByRef'>;
  encryptionKey: Buffer;
  logger: Logger;
}

/** The answer to a keyed retry that cannot deliver the first request's code: only a new request can. */
export const parkedCodeLost = () =>
  new ConflictError(
    'The request with this Idempotency-Key did not finish and its code is no longer kept: send a new request with a new Idempotency-Key',
    { code: 'IDEMPOTENT_OTP_CODE_NOT_KEPT' },
  );

/**
 * The code a resumed keyed request must deliver, `sealed` on its OTP record (`codeEncrypted`) by
 * the first request. When no configured key opens it (the key that sealed it was dropped before
 * `npm run reseal` reached it), the code is lost:
 * - if the first request's delivery rows all exist, it passed its commit point and only clearing
 *   the code failed: undefined, there is nothing left to write and the OTP is answered;
 * - otherwise nothing was committed: the retry is refused (409). Resuming with a fresh code is not
 *   done: the record's digest and expiry are the first request's (a key is normally dropped
 *   long after the OTPs it sealed expired), and twins resuming at once would race to replace them.
 * The record stays as it is, so every retry with the key gets the same answer and none is ever
 * answered 200 for a code that was not sent. The warning names the OTP, never the code.
 */
export async function openParkedCode(stored: OtpRecord, sealed: string, deps: ParkedCodeDeps): Promise<string | undefined> {
  try {
    return decryptSecret(sealed, deps.encryptionKey, stored.otpUuid);
  } catch {
    const written = new Set((await deps.deliveries.findByRef(stored.otpUuid)).map((row) => row.id));
    const rowsWritten = stored.channels.every((channel) => written.has(otpDeliveryId(stored.otpUuid, channel)));
    deps.logger.warn({ collection: 'otps', otpUuid: stored.otpUuid, rowsWritten }, 'parked OTP code opens with no configured key');
    if (rowsWritten) return undefined;
    throw parkedCodeLost();
  }
}
