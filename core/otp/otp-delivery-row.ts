import type { Channel, Delivery } from '../deliveries/delivery.types.js';
import { encryptSecret } from '../crypto/secret-box.js';
import { OTP_MACRO } from '../templates/template-macros.js';
import type { OtpRecord } from './otps.repository.js';

/**
 * A new QUEUED delivery row of an OTP's code: its code encrypted under the row's own id, sendable
 * until the OTP expires. The first messages and every resend are built here.
 */
export function queuedOtpRow(
  record: Pick<OtpRecord, 'otpUuid' | 'enterpriseId' | 'expiresAt'>,
  message: { id: string; channel: Channel; to: string; template: string; macros: Record<string, string>; test?: boolean },
  code: string,
  encryptionKey: Buffer,
  at: Date,
): Delivery {
  const { id, channel, to, template, macros, test } = message;
  return {
    id,
    kind: 'otp',
    enterpriseId: record.enterpriseId,
    refId: record.otpUuid,
    channel,
    to,
    template,
    ...(test ? { test: true } : {}),
    macros: { ...macros },
    secretMacros: encryptSecret(JSON.stringify({ [OTP_MACRO]: code }), encryptionKey, id),
    state: 'QUEUED',
    attempts: 0,
    notAfter: record.expiresAt,
    queuedAt: at,
    updatedAt: at,
  };
}
