/** The API scope of a user's token. */
export const USER_TOKEN_SCOPES = ['notifications'] as const;

/**
 * What a user's access token can carry: the API scope, plus openid / offline_access when the
 * sign-in asked for them, so the token says what the sign-in was granted.
 */
export const USER_ACCESS_TOKEN_SCOPES = ['notifications', 'openid', 'offline_access'] as const;
