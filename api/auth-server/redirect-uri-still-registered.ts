import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * The provider checks `redirect_uri` against the client when a sign-in starts, not when it
 * resumes after the login pages (up to SIGN_IN_INTERACTION_TTL_SECONDS later), and it issues the
 * code on resume. A redirect URI an admin removed meanwhile must receive nothing: the sign-in
 * ends on the error page instead (invalid_redirect_uri never redirects). The client here is the
 * one read on resume, so the check uses the app's redirect URIs as they are now.
 */
export function refuseRedirectUriRemovedSinceStart(oidcCtx: KoaContextWithOIDC): void {
  const { client, params, route } = oidcCtx.oidc;
  if (route !== 'resume' || !client) return;
  const redirectUri = params?.redirect_uri;
  if (typeof redirectUri !== 'string' || !client.redirectUriAllowed(redirectUri)) throw new errors.InvalidRedirectUri();
}

/**
 * Whether the sign-in's redirect URI is still one of the app's, for the answers our pages give
 * through the provider before it would run the check above: a denied consent ends in an error
 * the provider redirects to the URI the sign-in started with, without looking at the app again.
 */
export function redirectUriStillRegistered(client: { redirectUriAllowed(uri: string): boolean }, redirectUri: unknown): boolean {
  return typeof redirectUri === 'string' && client.redirectUriAllowed(redirectUri);
}
