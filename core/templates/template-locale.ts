import { BASE_LOCALE, type Locale } from '../platform/locales/shipped-locales.js';

/**
 * The name of a template's variant in a language: `login_sms.fr` beside `login_sms` (seeded from
 * templates/login_sms/text.fr.txt, template-files.loader.ts); English is the template itself.
 */
export function localizedTemplateName(name: string, locale: Locale): string {
  return locale === BASE_LOCALE ? name : `${name}.${locale}`;
}
