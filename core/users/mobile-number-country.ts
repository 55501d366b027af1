import type { Logger } from '../platform/logger/logger.js';
import { ValidationError } from '../platform/errors/app-error.js';
import { countSmsCountryRefusal, smsCountryRefusal, type SmsCountries } from '../providers/sms-country-policy.js';

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
 * Pure: the caller that knows who gave the number reports it (reportingSmsCountryRefusals).
 */
export function checkMobileNumberCountry(mobileNumber: unknown, allowed: SmsCountries): void {
  if (typeof mobileNumber !== 'string') return;
  const refusal = smsCountryRefusal(mobileNumber, allowed);
  if (refusal !== undefined) throw new SmsCountryRefusedError(refusal.country, refusal.reason);
}

/**
 * Runs a request's parsing and reports a number it refuses for its country: counted (`given`) and
 * logged with the client and enterprise that gave it, because who gives such numbers is what an
 * operator asks when they pile up (SMS pumping). The log names the country, never the number.
 */
export function reportingSmsCountryRefusals<T>(parse: () => T, caller: { clientId: string; enterpriseId: string }, logger: Logger): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof SmsCountryRefusedError) {
      countSmsCountryRefusal(err.country, 'given');
      logger.warn({ ...caller, country: err.country }, 'mobile number refused: SMS may not go to its country (SMS_ALLOWED_COUNTRIES)');
    }
    throw err;
  }
}
