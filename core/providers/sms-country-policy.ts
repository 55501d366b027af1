import { phoneNumbers } from '../platform/phone-numbers.js';
import { smsCountryRefusals } from '../platform/metrics/business-metrics.js';
import { RefusedBeforeProviderError } from './provider-errors.js';
import type { SmsProvider } from './provider.types.js';

/** The countries SMS may go to (ISO 3166-1 alpha-2 codes), or undefined: every country. */
export type SmsCountries = ReadonlySet<string> | undefined;

/** The provider error code of a message refused by the country policy (never a provider's own). */
export const COUNTRY_NOT_ALLOWED = 'country-not-allowed';

/**
 * The country a mobile number belongs to, by its country code and, where one code serves several
 * countries, its leading digits (+1 876 is Jamaica, not the US). A number is the whole
 * international number with or without its '+'. Undefined when no country's numbering plan
 * has it.
 */
export function smsCountryOf(mobileNumber: string): string | undefined {
  return phoneNumbers().parsePhoneNumberFromString(mobileNumber.startsWith('+') ? mobileNumber : `+${mobileNumber}`)?.country;
}

/** Why no SMS may go to a number: the number's country (`unknown`: none) and the reason to give. */
export interface SmsCountryRefusal {
  country: string;
  reason: string;
}

/**
 * Why no SMS may go to this number under the deployment's list, or undefined when it may. SMS
 * pumping (toll fraud) sends codes to premium-rate numbers of countries the deployment never
 * serves; a list of the countries it does serve stops it whatever the caller asks. The text names
 * the country, never the number. Pure: whoever refuses reports it (countSmsCountryRefusal).
 */
export function smsCountryRefusal(mobileNumber: string, allowed: SmsCountries): SmsCountryRefusal | undefined {
  if (allowed === undefined) return undefined;
  const country = smsCountryOf(mobileNumber);
  if (country !== undefined && allowed.has(country)) return undefined;
  if (country === undefined)
    return { country: 'unknown', reason: 'SMS goes only to the countries in SMS_ALLOWED_COUNTRIES, and no country has this number' };
  return { country, reason: `SMS to ${country} numbers is not allowed (SMS_ALLOWED_COUNTRIES)` };
}

/**
 * Counts a refusal (by the number's country, `unknown`: none) where it was met: `given`
 * (enrollment, PATCH), `asked` (an OTP asked for by SMS alone to a stored number) or `send` (a
 * stored number at send time).
 */
export function countSmsCountryRefusal(country: string, where: 'given' | 'asked' | 'send'): void {
  // A burst of these is what an SMS pumping attempt looks like on a dashboard.
  smsCountryRefusals.inc({ country, where });
}

/**
 * The provider, refusing before any request a message to a number outside the allowed countries:
 * a permanent failure of the recipient (another account would refuse it too), recorded on the
 * delivery, which then names no provider (none had it). Every SMS goes through here (OTPs, sign-in codes, activation codes), whoever stored
 * the number and whenever.
 */
export function guardSmsCountries(provider: SmsProvider, allowed: SmsCountries): SmsProvider {
  if (allowed === undefined) return provider;
  return {
    name: provider.name,
    async send(message) {
      const refusal = smsCountryRefusal(message.to, allowed);
      if (refusal === undefined) return provider.send(message);
      countSmsCountryRefusal(refusal.country, 'send');
      throw new RefusedBeforeProviderError(refusal.reason, COUNTRY_NOT_ALLOWED);
    },
  };
}
