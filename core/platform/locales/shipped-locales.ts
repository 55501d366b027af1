/**
 * The languages the sign-in pages ship in: one catalog each, templates/locales/<locale>.json
 * (a unit test keeps this list and the files equal). Every choice of language is made from this
 * list, never from what a request says, so no request can name a file or a header value.
 */
export const SHIPPED_LOCALES = ['en', 'de', 'es', 'fr', 'pt'] as const;

export type Locale = (typeof SHIPPED_LOCALES)[number];

/** The catalog every other one falls back to, key by key. */
export const BASE_LOCALE: Locale = 'en';
