import { ValidationError } from '../platform/errors/app-error.js';
import { isCanonicalLoopbackHost } from '../platform/loopback-host.js';

/**
 * The web origins of a client: the pages allowed to call the user routes (`/v1/me*`) and the
 * token endpoint from a browser (CORS). Only public clients have any, since a confidential
 * client's secret has no business in a page: the origins of its https redirect URIs, plus the
 * `webOrigins` registered for it (a page that signs in through a redirect URI elsewhere, or a
 * local development server). http redirect URIs give no origin: plain http pages can be
 * altered on the way, so such an origin must be listed on purpose.
 */
export function webOriginsOf(client: { isPublic: boolean; redirectUris: readonly string[]; webOrigins?: readonly string[] }): string[] {
  if (!client.isPublic) return [];
  const fromRedirects = client.redirectUris.map((uri) => URL.parse(uri)).filter((url) => url?.protocol === 'https:');
  return [...new Set([...fromRedirects.map((url) => (url as URL).origin), ...(client.webOrigins ?? [])])];
}

/**
 * A `webOrigins` entry as browsers send it in the Origin header: `https://host[:port]` (a
 * trailing `/` is dropped), or `http://` on a loopback host only; no path, query, user or `*`.
 */
export function normalizeWebOrigin(value: string): string {
  const parsed = URL.parse(value);
  const refuse = (rule: string) => new ValidationError(`Invalid field webOrigins: '${value}' ${rule}`);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw refuse('is not an http(s) origin');
  if (
    parsed.username ||
    parsed.password ||
    parsed.pathname !== '/' ||
    parsed.search ||
    parsed.hash ||
    value.includes('?') ||
    value.includes('#')
  )
    throw refuse('is not an origin (scheme, host and port only)');
  if (parsed.hostname.includes('*')) throw refuse('must name one host (no wildcards)');
  if (parsed.protocol === 'http:' && !isCanonicalLoopbackHost(parsed.hostname))
    throw refuse('uses http off loopback; pages of other origins must be https');
  return parsed.origin;
}
