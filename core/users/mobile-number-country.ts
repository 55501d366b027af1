import { ValidationError } from '../platform/errors/app-error.js';
import { smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';

/**
 * A mobile number outside the deployment's SMS countries is refused where it is given (enrollment,
 * PATCH), as the field's 422 with the reason, instead of being stored and failing at every send.
 */
export function checkMobileNumberCountry(mobileNumber: unknown, allowed: SmsCountries): void {
  if (typeof mobileNumber !== 'string') return;
  const reason = smsCountryRefusal(mobileNumber, allowed, 'given');
  if (reason !== undefined) throw new ValidationError('[Invalid field mobileNumber]', { error: 'Invalid data.', extra: { reason } });
}
