import type { Locale } from '../platform/locales/shipped-locales.js';

/** Macro of the login templates saying how long the code is valid ("10 minutes", "1 minute"). */
export const CODE_LIFETIME_MACRO = '__SVC_EXPIRES_IN__';

/**
 * How long a login code lives, in words of the language: whole minutes rounded down (never more
 * than the code really lives; at least one, as LOGIN_CODE_TTL_SECONDS is at least 60), the unit
 * and its plural from Intl, so every shipped language says it the same way on the page and in
 * the message.
 */
export function loginCodeLifetime(locale: Locale, ttlSeconds: number): string {
  const minutes = Math.max(1, Math.floor(ttlSeconds / 60));
  return new Intl.NumberFormat(locale, { style: 'unit', unit: 'minute', unitDisplay: 'long' }).format(minutes);
}
