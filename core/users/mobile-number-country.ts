import { ValidationError } from '../platform/errors/app-error.js';
import { smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';

/** The mobileNumber field's 422 for a number of a country SMS may not go to; `country` says which (`unknown`: none). */
export class SmsCountryRefusedError extends ValidationError {
  constructor(
    readonly country: string,
    reason: string,
  ) {
    super('[Invalid field mobileNumber]', { error: 'Invalid data.', extra: { reason } });
  }
}

/**
 * A mobile number outside the deployment's SMS countries is refused where it is given (enrollment,
 * PATCH), as the field's 422 with the reason, instead of being stored and failing at every send.
 */
export function checkMobileNumberCountry(mobileNumber: unknown, allowed: SmsCountries): void {
  if (typeof mobileNumber !== 'string') return;
  const refusal = smsCountryRefusal(mobileNumber, allowed, 'given');
  if (refusal !== undefined) throw new SmsCountryRefusedError(refusal.country, refusal.reason);
}
