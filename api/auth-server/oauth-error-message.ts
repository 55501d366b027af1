import type { Locale } from '../../core/platform/locales/shipped-locales.js';
import { translate } from './page-catalogs.js';

/** The provider's description of `invalid_redirect_uri`, for the same answer given outside it. */
export const REDIRECT_URI_NOT_REGISTERED = "redirect_uri did not match any of the client's registered redirect_uris";

/** The error page's sentence for the errors that never redirect and for an outage, and a plain one for others. */
export function describeOAuthError(locale: Locale, error: string, description: string): string {
  // The error code and its description stay as the protocol says them: what the app's developer looks up.
  const code = `(${error}${description ? `: ${description}` : ''})`;
  if (error === 'invalid_client') return translate(locale, 'oauthError.invalidClient', { code });
  if (error === 'invalid_redirect_uri') return translate(locale, 'oauthError.invalidRedirectUri', { code });
  if (error === 'temporarily_unavailable') return translate(locale, 'oauthError.temporarilyUnavailable', { code });
  return translate(locale, 'oauthError.other', { code });
}
