import type { Locale } from '../../core/platform/locales/shipped-locales.js';
import { translate } from './page-catalogs.js';

/** The scopes whose meaning the consent page can put in words (catalog keys `scope.<name>`). */
const LABELLED_SCOPES = new Set(['openid', 'offline_access', 'notifications']);

/** What a scope lets the app do, in the page's language; an unknown scope shows as its name. */
export function scopeLabel(locale: Locale, scope: string): string {
  return LABELLED_SCOPES.has(scope) ? translate(locale, `scope.${scope}`) : scope;
}
