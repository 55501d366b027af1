import type { Channel } from '../deliveries/delivery.types.js';
import { smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';
import type { User } from '../users/user.types.js';

/**
 * The channel a login code goes by: SMS to the registered mobile number, else e-mail. A
 * number SMS may not go to (outside SMS_ALLOWED_COUNTRIES, stored before the list was set)
 * reaches no one, so it counts as no number: the code goes by e-mail when the user has an
 * address, and is not sent at all (undefined) when there is nothing else.
 */
export function loginCodeChannel(user: Pick<User, 'mobileNumber' | 'emailId'>, smsCountries: SmsCountries): Channel | undefined {
  if (user.mobileNumber && smsCountryRefusal(user.mobileNumber, smsCountries) === undefined) return 'SMS';
  if (user.emailId) return 'EMAIL';
  return undefined;
}
