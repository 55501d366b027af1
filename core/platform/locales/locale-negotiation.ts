import { SHIPPED_LOCALES, type Locale } from './shipped-locales.js';

/**
 * Longest `ui_locales` or `Accept-Language` value read; past it the list is cut at its last whole
 * entry. Real browsers send well under 200 characters: the cap only bounds the work an attacker
 * can ask for.
 */
export const MAX_LANGUAGE_LIST_LENGTH = 512;
/** At most this many entries of a list are considered. */
const MAX_LANGUAGE_ENTRIES = 32;
/** A BCP 47 tag as far as matching needs: letters, digits and hyphens in short subtags. */
const LANGUAGE_TAG = /^[a-z]{1,8}(-[a-z0-9]{1,8})*$/;
const QUALITY = /^q=(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/;

/** The shipped locale a tag names: exactly (`fr`), else by its language alone (`fr-CA` -> `fr`). */
function shippedLocaleOf(tag: string): Locale | undefined {
  const lower = tag.toLowerCase().replace(/_/g, '-');
  if (!LANGUAGE_TAG.test(lower)) return undefined;
  const exact = SHIPPED_LOCALES.find((locale) => locale === lower);
  if (exact) return exact;
  const language = lower.split('-')[0];
  return SHIPPED_LOCALES.find((locale) => locale === language);
}

/** The list as read: its first MAX_LANGUAGE_LIST_LENGTH characters, and only the entries whole in them. */
function bounded(value: string, separator: RegExp): string[] {
  let text = value;
  if (text.length > MAX_LANGUAGE_LIST_LENGTH) {
    const head = text.slice(0, MAX_LANGUAGE_LIST_LENGTH);
    const entryGoesOn = !new RegExp(separator.source).test(text.charAt(MAX_LANGUAGE_LIST_LENGTH));
    // The entry the cap cuts through is dropped: half a tag could name another language ("fry" -> "fr").
    const lastSeparator = Math.max(-1, ...[...head.matchAll(separator)].map((m) => m.index));
    text = entryGoesOn ? head.slice(0, Math.max(lastSeparator, 0)) : head;
  }
  return text.split(separator).slice(0, MAX_LANGUAGE_ENTRIES);
}

/** The first shipped locale of an OpenID Connect `ui_locales` (space-separated tags, in order of preference). */
export function localeOfUiLocales(uiLocales: unknown): Locale | undefined {
  if (typeof uiLocales !== 'string') return undefined;
  for (const tag of bounded(uiLocales, / +/g)) {
    const locale = shippedLocaleOf(tag.trim());
    if (locale) return locale;
  }
  return undefined;
}

/** The shipped locale an `Accept-Language` header prefers most (q-values; equal ones keep their order; q=0 is "not this one"). */
export function localeOfAcceptLanguage(header: unknown): Locale | undefined {
  if (typeof header !== 'string') return undefined;
  const entries: { locale: Locale; quality: number; position: number }[] = [];
  bounded(header, /,/g).forEach((entry, position) => {
    const [tag = '', ...parameters] = entry.split(';').map((part) => part.trim());
    const qualityParameter = parameters.find((p) => p.toLowerCase().startsWith('q='));
    if (qualityParameter !== undefined && !QUALITY.test(qualityParameter.toLowerCase())) return;
    const quality = qualityParameter === undefined ? 1 : Number(qualityParameter.slice(2));
    const locale = shippedLocaleOf(tag);
    if (locale && quality > 0) entries.push({ locale, quality, position });
  });
  entries.sort((a, b) => b.quality - a.quality || a.position - b.position);
  return entries[0]?.locale;
}

/**
 * The language of a sign-in page: the app's `ui_locales`, else the browser's `Accept-Language`,
 * else the operator's default (SIGN_IN_DEFAULT_LOCALE). Always one of SHIPPED_LOCALES.
 */
export function chooseLocale(input: { uiLocales?: unknown; acceptLanguage?: unknown; fallback: Locale }): Locale {
  return localeOfUiLocales(input.uiLocales) ?? localeOfAcceptLanguage(input.acceptLanguage) ?? input.fallback;
}
