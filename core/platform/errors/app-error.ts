import { STATUS_CODES } from 'node:http';

export interface AppErrorOptions {
  /** Short label written in the body's `error` field; defaults to the HTTP reason phrase. */
  error?: string;
  /** Extra fields merged into the response body (for example `userStatus`). */
  extra?: Record<string, unknown>;
  /** Headers the edge must set (for example `Retry-After`). */
  headers?: Record<string, string>;
  /** Whether the message may be shown to callers; unexposed errors become a generic 500. */
  expose?: boolean;
  cause?: unknown;
}

/** The one base error of the project: a stable code, an HTTP status and a caller-facing message. */
export class AppError extends Error {
  readonly error: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly expose: boolean;

  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.error = options.error ?? STATUS_CODES[status] ?? 'Error';
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
    this.expose = options.expose ?? status < 500;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('BAD_REQUEST', 400, message, options);
  }
}

export class ValidationError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('VALIDATION_FAILED', 422, message, options);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('NOT_FOUND', 404, message, options);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('CONFLICT', 409, message, options);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super('SERVICE_UNAVAILABLE', 503, message, { ...options, expose: true });
  }
}

/**
 * OAuth-style errors (RFC 6750) use their own body shape `{error, error_description}`
 * instead of the enterprise error body `{timestamp, status, error, message, path}`.
 */
export class BearerError extends AppError {
  constructor(
    status: 401 | 403,
    readonly oauthError: string,
    readonly description: string,
    extra: Record<string, unknown> = {},
    /** The scope the request needed (insufficient_scope), named in the challenge so the caller knows what to ask for. */
    readonly requiredScope?: string,
  ) {
    super(oauthError.toUpperCase(), status, description, { error: oauthError, extra });
  }
}

/** RFC 6750 3.1: the token is valid but does not carry the scope the route needs. */
export function insufficientScope(scope: string): BearerError {
  return new BearerError(403, 'insufficient_scope', `The access token does not grant the scope '${scope}'`, {}, scope);
}
