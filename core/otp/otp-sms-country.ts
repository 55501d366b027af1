import type { Channel } from '../deliveries/delivery.types.js';
import { ValidationError } from '../platform/errors/app-error.js';
import { countSmsCountryRefusal, smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';

/** What the caller and the operator are told, by what asked for the message. */
const WORDING = {
  generation: {
    message: "dispatchOptions.SMS: the user's mobileNumber is outside the countries SMS goes to",
    logLine: "OTP refused: SMS may not go to the country of the user's mobileNumber (SMS_ALLOWED_COUNTRIES)",
  },
  // A resend goes to the addresses of the OTP's first messages, read when it was made; the list
  // may have been set since.
  resend: {
    message: "OTP cannot be resent: the user's mobileNumber is outside the countries SMS goes to",
    logLine: "OTP resend refused: SMS may not go to the country of the user's mobileNumber (SMS_ALLOWED_COUNTRIES)",
  },
} as const;

/**
 * An OTP whose only channel is SMS, to a stored number outside SMS_ALLOWED_COUNTRIES (stored
 * before the list was set, or under another): no message of it could ever arrive, since the
 * dispatch worker refuses the number too. It is refused at once, as the field's 422 with the
 * reason (like a channel the user has no address for), rather than accepted with a code that
 * ends FAILED. An OTP that also goes, or falls back, to e-mail is accepted: the e-mail may arrive.
 * Pure CPU on the rows already read (the user's at creation, the first messages' at a resend): no
 * store round trip, and nothing when e-mail is named. Counted as `asked` either way.
 */
export function undeliverableSms(
  addresses: Partial<Record<Channel, string>>,
  fallbackChannel: Channel | undefined,
  allowed: SmsCountries,
  askedBy: keyof typeof WORDING = 'generation',
): { country: string; error: ValidationError; logLine: string } | undefined {
  const number = addresses.SMS;
  if (allowed === undefined || number === undefined || addresses.EMAIL !== undefined || fallbackChannel === 'EMAIL') return undefined;
  const refusal = smsCountryRefusal(number, allowed);
  if (refusal === undefined) return undefined;
  // A burst of these, by client, is what SMS pumping through stored numbers looks like.
  countSmsCountryRefusal(refusal.country, 'asked');
  return {
    country: refusal.country,
    error: new ValidationError(WORDING[askedBy].message, { extra: { reason: refusal.reason } }),
    logLine: WORDING[askedBy].logLine,
  };
}
