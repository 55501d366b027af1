import { ValidationError } from '../platform/errors/app-error.js';
import { isCanonicalLoopbackHost } from '../platform/loopback-host.js';

/**
 * What a redirect URI is, for the rules of OAuth for native apps (RFC 8252) and browser apps:
 * - `https`: a web page (or a native app's claimed https link);
 * - `http-loopback`: `http://127.0.0.1`, `http://[::1]` or `http://localhost`, where a native app
 *   listens on whatever port the system gave it;
 * - `http`: plain http elsewhere (local or internal deployments of server-side apps);
 * - `private-use`: a native app's own scheme, named after a domain its maker controls, reversed
 *   (`com.example.app:/callback`), so two apps do not claim the same one by accident.
 */
export type RedirectUriKind = 'https' | 'http-loopback' | 'http' | 'private-use';

/** A reverse domain name: at least two labels, lower case (URL parsing lower-cases schemes). */
const REVERSE_DOMAIN_SCHEME_RE = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/;

const invalid = (uri: string, rule: string) => new ValidationError(`Invalid field redirectUris: '${uri}' ${rule}`);

/** Whether an authorization request's redirect URI is plain http to a host other than loopback. */
export function isPlainHttpOffLoopback(redirectUri: unknown): boolean {
  if (typeof redirectUri !== 'string') return false;
  const parsed = URL.parse(redirectUri);
  return parsed !== null && parsed.protocol === 'http:' && !isCanonicalLoopbackHost(parsed.hostname);
}

/** The kind of a redirect URI; ValidationError (422) for one no client may register. */
export function redirectUriKind(uri: string): RedirectUriKind {
  const parsed = URL.parse(uri);
  if (!parsed) throw invalid(uri, 'is not an absolute URI');
  if (uri.includes('#')) throw invalid(uri, 'must not contain a fragment');
  if (parsed.username || parsed.password) throw invalid(uri, 'must not contain a user name or password');
  // URL parsing keeps `*` in a host name; an operator writing one expects a wildcard that exact
  // matching never gives, so the URI is refused rather than stored to match nothing.
  if (parsed.hostname.includes('*')) throw invalid(uri, 'must name one host (no wildcards: redirect URIs match exactly)');
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme === 'https') return 'https';
  if (scheme === 'http') return isCanonicalLoopbackHost(parsed.hostname) ? 'http-loopback' : 'http';
  if (!REVERSE_DOMAIN_SCHEME_RE.test(scheme))
    throw invalid(uri, 'uses a scheme that is neither http(s) nor a reverse domain name (e.g. com.example.app:/callback)');
  return 'private-use';
}

/**
 * Checks a client's redirect URIs as a whole: private-use schemes only for public clients (a
 * confidential client is a server, and a scheme can be claimed by any app on the device), and a
 * native app's other URIs as the authorization server accepts them for native apps (http only on
 * loopback, https never on loopback).
 */
export function checkRedirectUris(uris: readonly string[], isPublic: boolean): void {
  const kinds = uris.map((uri) => ({ uri, kind: redirectUriKind(uri) }));
  const privateUse = kinds.find((entry) => entry.kind === 'private-use');
  if (!privateUse) return;
  if (!isPublic) throw invalid(privateUse.uri, 'uses a private-use scheme, which only public clients (native apps) may register');
  const http = kinds.find((entry) => entry.kind === 'http');
  if (http) throw invalid(http.uri, 'is plain http off loopback, which a native app (a client with a private-use scheme) may not use');
  const httpsLoopback = kinds.find((entry) => entry.kind === 'https' && isCanonicalLoopbackHost(new URL(entry.uri).hostname));
  if (httpsLoopback) throw invalid(httpsLoopback.uri, 'is https on a loopback address, which a native app may not use');
}

/**
 * A native app (RFC 8252) in the authorization server's terms: a public client with a
 * private-use scheme or a loopback redirect URI, and none that a native app may not use. Its
 * loopback redirect URIs match on any port (the app listens on whatever port is free).
 */
export function isNativeApp(client: { isPublic: boolean; redirectUris: readonly string[] }): boolean {
  if (!client.isPublic) return false;
  const kinds = client.redirectUris.map((uri) => {
    try {
      const kind = redirectUriKind(uri);
      return kind === 'https' && isCanonicalLoopbackHost(new URL(uri).hostname) ? 'https-loopback' : kind;
    } catch {
      return 'invalid';
    }
  });
  return (
    kinds.some((kind) => kind === 'private-use' || kind === 'http-loopback') &&
    kinds.every((kind) => kind === 'private-use' || kind === 'http-loopback' || kind === 'https')
  );
}
