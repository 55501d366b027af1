import type { AccessToken, ClientCredentials, KoaContextWithOIDC } from 'oidc-provider';

/**
 * When the user behind a user token signed in (OpenID Connect's `auth_time`, epoch seconds), kept
 * in the opaque token's record: routes that change how the user signs in (adding a passkey) ask
 * for a recent one (RFC 9470). A code carries the time of the sign-in that made it, and a refresh
 * token that of the first sign-in of its grant, so refreshing never makes a sign-in recent.
 */
export function signInTimeClaims(oidcCtx: KoaContextWithOIDC, token: AccessToken | ClientCredentials): { auth_time: number } | undefined {
  if (token.kind !== 'AccessToken') return undefined;
  const { AuthorizationCode: code, RefreshToken: refresh } = oidcCtx.oidc.entities;
  const authTime = code?.authTime ?? refresh?.authTime;
  return typeof authTime === 'number' ? { auth_time: authTime } : undefined;
}

/** The sign-in time recorded with a user token, or undefined for tokens made without one. */
export function signInTimeOf(tokenPayload: { extra?: unknown }): number | undefined {
  const extra = tokenPayload.extra as { auth_time?: unknown } | undefined;
  return typeof extra?.auth_time === 'number' ? extra.auth_time : undefined;
}
