import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { BearerError } from './http-error.js';
import { toHttpRefusal } from './http-error-mapping.js';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Formats like `Sat Nov 21 23:45:37 UTC 2026` (the enterprise error body's timestamp), always in UTC. */
export function formatErrorTimestamp(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  return `${WEEKDAYS[date.getUTCDay()]} ${MONTHS[date.getUTCMonth()]} ${pad(date.getUTCDate())} ${time} UTC ${date.getUTCFullYear()}`;
}

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  /** Set for unexpected errors: the id written in the body and in the log line. */
  errorId?: string;
}

/**
 * RFC 6750 3: every 401 carries a challenge, and a 403 for a missing scope names that scope;
 * RFC 9470: a sign-in too old for the route names the `max_age` to sign in again with.
 */
function bearerChallenge(err: BearerError): Record<string, string> {
  if (err.requiredScope !== undefined) return { 'WWW-Authenticate': `Bearer error="${err.oauthError}", scope="${err.requiredScope}"` };
  if (err.maxAgeSeconds !== undefined) {
    return { 'WWW-Authenticate': `Bearer error="${err.oauthError}", error_description="${err.description}", max_age=${err.maxAgeSeconds}` };
  }
  return err.status === 401 ? { 'WWW-Authenticate': `Bearer error="${err.oauthError}"` } : {};
}

/** Maps any thrown value to the response the enterprise API sends: the error body, or an RFC 6750 body for token errors. */
export function toErrorResponse(err: unknown, path: string, now = new Date()): ErrorResponse {
  if (err instanceof BearerError) {
    return {
      status: err.status,
      body: { error: err.oauthError, error_description: err.description, ...err.extra },
      headers: bearerChallenge(err),
    };
  }
  const refusal = toHttpRefusal(err);
  if (refusal) {
    const { status, error, message, extra, headers } = refusal;
    return { status, body: { timestamp: formatErrorTimestamp(now), status, error, message, path, ...extra }, headers };
  }
  const errorId = randomUUID();
  return {
    status: 500,
    body: {
      timestamp: formatErrorTimestamp(now),
      status: 500,
      error: STATUS_CODES[500],
      message: `Unexpected error; reference ${errorId}`,
      path,
      errorId,
    },
    headers: {},
    errorId,
  };
}
