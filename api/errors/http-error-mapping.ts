import { STATUS_CODES } from 'node:http';
import { AppError, ConflictError, RateLimitedError, UnavailableError, type ErrorKind } from '../../core/platform/errors/app-error.js';
import { HttpError } from './http-error.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** The status each kind of domain error is answered with. */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  malformed: 400,
  invalid: 422,
  'not-found': 404,
  forbidden: 403,
  conflict: 409,
  gone: 410,
  locked: 423,
  'rate-limited': 429,
  unavailable: 503,
  // The message of a failed dependency is part of a contract (docs/enrollment.md), so it is shown.
  'dependency-failed': 500,
};

/**
 * The `error` label of every 422: the one the specification gives its validation errors
 * (`Invalid data.`, Add user's table), on every route of every JSON API, so that an integrator
 * matches one label whichever route refused the value. Other statuses say their reason phrase
 * unless the error names its own label.
 */
export const INVALID_DATA_LABEL = 'Invalid data.';

/** A refusal as HTTP says it, before a body shape is chosen. */
export interface HttpRefusal {
  status: number;
  /** The body's `error` label: the error's own, else `Invalid data.` for 422 and the reason phrase for the rest. */
  error: string;
  message: string;
  extra: Record<string, unknown>;
  headers: Record<string, string>;
}

/** What the caller is told to wait for, in the headers a refusal carries. */
function headersOf(err: AppError): Record<string, string> {
  if (err instanceof RateLimitedError) return { 'Retry-After': String(err.retryAfterSeconds), ...rateLimitHeaders(err.budgets) };
  if ((err instanceof UnavailableError || err instanceof ConflictError) && err.retryAfterSeconds !== undefined) {
    return { 'Retry-After': String(err.retryAfterSeconds) };
  }
  return {};
}

/** The HTTP form of a domain or edge error; undefined for anything else (an unexpected failure). */
export function toHttpRefusal(err: unknown): HttpRefusal | undefined {
  if (err instanceof HttpError) {
    return { status: err.status, error: err.error ?? reason(err.status), message: err.message, extra: err.extra, headers: err.headers };
  }
  if (err instanceof AppError) {
    const status = STATUS_OF_KIND[err.kind];
    return { status, error: err.error ?? reason(status), message: err.message, extra: err.extra, headers: headersOf(err) };
  }
  return undefined;
}

function reason(status: number): string {
  if (status === 422) return INVALID_DATA_LABEL;
  return STATUS_CODES[status] ?? 'Error';
}
