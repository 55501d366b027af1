/**
 * Refusals that only the HTTP edge can make (a route that does not exist, a method, a media type,
 * a caller address or credential the edge checks): they already are HTTP, so they carry their
 * status and headers. Core never raises these; it raises the domain errors of core/platform/errors.
 */
export class HttpError extends Error {
  readonly error: string | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    options: { error?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.error = options.error;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/**
 * OAuth-style errors (RFC 6750) use their own body shape `{error, error_description}`
 * instead of the enterprise error body `{timestamp, status, error, message, path}`.
 */
export class BearerError extends HttpError {
  constructor(
    status: 401 | 403,
    readonly oauthError: string,
    readonly description: string,
    extra: Record<string, unknown> = {},
    /** The scope the request needed (insufficient_scope), named in the challenge so the caller knows what to ask for. */
    readonly requiredScope?: string,
    /** How recent the user's sign-in must be (insufficient_user_authentication, RFC 9470): `max_age` of the challenge. */
    readonly maxAgeSeconds?: number,
  ) {
    super(oauthError.toUpperCase(), status, description, { error: oauthError, extra });
  }
}

/** RFC 6750 3.1: the token is valid but does not carry the scope the route needs. */
export function insufficientScope(scope: string): BearerError {
  return new BearerError(403, 'insufficient_scope', `The access token does not grant the scope '${scope}'`, {}, scope);
}

/**
 * RFC 9470: the token is valid but its user signed in longer ago than the route allows; the app
 * signs the user in again with `max_age` (the authorization server then asks who they are) and
 * retries with the new token.
 */
export function recentSignInRequired(maxAgeSeconds: number, description: string): BearerError {
  return new BearerError(401, 'insufficient_user_authentication', description, { max_age: maxAgeSeconds }, undefined, maxAgeSeconds);
}
