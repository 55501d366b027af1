/** The names of the authorization server's cookies: its browser session, and the sign-in under way. */
export interface ProviderCookieNames {
  session: string;
  interaction: string;
  resume: string;
}

/**
 * Behind https, prefixed names (RFC 6265bis 4.1.3): a browser keeps a `__Secure-` cookie only when
 * it came over https with `Secure`, and a `__Host-` one only when it also has `Path=/` and no
 * `Domain`. So a page on a sibling subdomain, or a man in the middle of a plain-http request to
 * the host, cannot plant a session of its own choosing (session fixation) or shadow the real one.
 * The session cookie is `Path=/`, hence `__Host-`; the sign-in's two cookies are bound to the
 * paths of its pages, which `__Host-` forbids, hence `__Secure-`. Over plain http (a local
 * `npm start`), browsers refuse prefixed cookies: the provider's own names are kept there.
 */
export function providerCookieNames(publicUrl: string): ProviderCookieNames {
  if (new URL(publicUrl).protocol !== 'https:') return { session: '_session', interaction: '_interaction', resume: '_interaction_resume' };
  return { session: '__Host-svc-session', interaction: '__Secure-svc-interaction', resume: '__Secure-svc-interaction-resume' };
}
