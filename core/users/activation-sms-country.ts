import type { Logger } from '../platform/logger/logger.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { countSmsCountryRefusal, smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';
import { SmsCountryRefusedError } from './mobile-number-country.js';
import type { User } from './user.types.js';

/**
 * An activation code goes to every address of the user. One whose only address is a number outside
 * SMS_ALLOWED_COUNTRIES (stored before the list was set, or under another) could never arrive: the
 * dispatch worker refuses the number. A re-issue for such a user is refused as enrollment refuses
 * the number, the mobileNumber field's 422 with the reason, before a code is stored, so no pending
 * activation is left waiting for a message that cannot come; the fix is the same as at enrollment
 * (PATCH another number, or an e-mail address). A user with an e-mail address gets the code there.
 * Counted as `asked` (a message asked for, by SMS alone, to a stored number) and logged with the
 * user and the country, never the number. Pure CPU on the user row already read.
 */
export function refuseActivationOnlyBySmsOutsideCountries(
  ref: UserRef,
  user: Pick<User, 'mobileNumber' | 'emailId'>,
  allowed: SmsCountries,
  logger: Logger,
): void {
  if (user.emailId || !user.mobileNumber) return;
  const refusal = smsCountryRefusal(user.mobileNumber, allowed);
  if (refusal === undefined) return;
  // A burst of these, by enterprise, is what SMS pumping through stored numbers looks like.
  countSmsCountryRefusal(refusal.country, 'asked');
  logger.warn(
    { enterpriseId: ref.enterpriseId, userId: ref.userId, country: refusal.country },
    "activation re-issue refused: SMS may not go to the country of the user's mobileNumber (SMS_ALLOWED_COUNTRIES)",
  );
  throw new SmsCountryRefusedError(refusal.country, refusal.reason);
}
