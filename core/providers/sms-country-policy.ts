import { parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { smsCountryRefusals } from '../platform/metrics/business-metrics.js';
import { PermanentProviderError } from './provider-errors.js';
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
  return parsePhoneNumberFromString(mobileNumber.startsWith('+') ? mobileNumber : `+${mobileNumber}`)?.country;
}

/**
 * Why no SMS may go to this number under the deployment's list (and the number's country), or undefined when it may. SMS
 * pumping (toll fraud) sends codes to premium-rate numbers of countries the deployment never
 * serves; a list of the countries it does serve stops it whatever the caller asks. The text names
 * the country, never the number.
 */
export function smsCountryRefusal(
  mobileNumber: string,
  allowed: SmsCountries,
  where: 'given' | 'send',
): { country: string; reason: string } | undefined {
  if (allowed === undefined) return undefined;
  const country = smsCountryOf(mobileNumber);
  if (country !== undefined && allowed.has(country)) return undefined;
  // A burst of these is what an SMS pumping attempt looks like on a dashboard.
  smsCountryRefusals.inc({ country: country ?? 'unknown', where });
  if (country === undefined)
    return { country: 'unknown', reason: 'SMS goes only to the countries in SMS_ALLOWED_COUNTRIES, and no country has this number' };
  return { country, reason: `SMS to ${country} numbers is not allowed (SMS_ALLOWED_COUNTRIES)` };
}

/**
 * The provider, refusing before any request a message to a number outside the allowed countries:
 * a permanent failure of the recipient (another account would refuse it too), recorded on the
 * delivery. Every SMS goes through here (OTPs, sign-in codes, activation codes), whoever stored
 * the number and whenever.
 */
export function guardSmsCountries(provider: SmsProvider, allowed: SmsCountries): SmsProvider {
  if (allowed === undefined) return provider;
  return {
    name: provider.name,
    async send(message) {
      const refusal = smsCountryRefusal(message.to, allowed, 'send');
      if (refusal !== undefined) throw new PermanentProviderError(refusal.reason, undefined, COUNTRY_NOT_ALLOWED);
      return provider.send(message);
    },
  };
}
