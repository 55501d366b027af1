import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, Request } from 'express';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { UnavailableError } from '../../core/platform/errors/app-error.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { fromBodyParser } from '../middleware/body-parser-errors.js';
import { clientLibraryCode } from './client-library-codes.js';
import { toErrorResponse, type ErrorResponse } from './error-body.js';

/** Seconds a client is asked to wait when a store is down: about one reconnect attempt. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * What a thrown value means at the HTTP edge, whichever body renders it: body-parser refusals
 * become the service's own errors, and a store that cannot be reached is unavailable (503 with
 * Retry-After), never a 500.
 */
function meaningOf(rawErr: unknown, log: Logger): unknown {
  if (isStoreUnavailable(rawErr)) {
    log.warn({ err: (rawErr as Error).message }, 'database unavailable');
    return new UnavailableError('Service unavailable: the database is not reachable; retry later', {
      retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
    });
  }
  return (rawErr && typeof rawErr === 'object' && fromBodyParser(rawErr as { type?: string })) || rawErr;
}

/**
 * The one pipeline every error of a request goes through: its meaning, then its HTTP form
 * (api/errors/http-error-mapping.ts) in the enterprise body. Each renderer below only reshapes it.
 */
export function errorResponseOf(rawErr: unknown, req: Request, logger: Logger): ErrorResponse {
  const log = req.log ?? logger;
  const response = toErrorResponse(meaningOf(rawErr, log), req.originalUrl.split('?')[0] ?? req.path);
  if (response.errorId) log.error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
  return response;
}

/** The enterprise API's errors: `{timestamp, status, error, message, path}`, or RFC 6750 bodies for token errors. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const response = errorResponseOf(rawErr, req, logger);
    res.status(response.status).set(response.headers).json(response.body);
  };
}

/**
 * Errors of the user API (`/v1/me/...`): the usual bodies plus `code`, the client library's
 * result code the refusal maps to, so the app knows whether to let the user retry.
 */
export function clientLibraryErrors(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const response = errorResponseOf(rawErr, req, logger);
    const error = typeof response.body.error === 'string' ? response.body.error : undefined;
    res
      .status(response.status)
      .set(response.headers)
      .json({ ...response.body, code: clientLibraryCode(response.status, error) });
  };
}

/**
 * The sign-in pages' errors, rendered as an HTML page by the caller: every failure there is
 * logged with a reference the page shows, and is the service's fault (at least 500), never the
 * JSON body of the API.
 */
export function errorPageOf(
  rawErr: unknown,
  req: Request,
  logger: Logger,
): { status: number; headers: Record<string, string>; errorId: string } {
  const log = req.log ?? logger;
  const response = toErrorResponse(meaningOf(rawErr, log), req.originalUrl.split('?')[0] ?? req.path);
  const errorId = response.errorId ?? randomUUID();
  log.error({ err: rawErr, errorId }, 'sign-in page failed');
  return response.status >= 500 ? { status: response.status, headers: response.headers, errorId } : { status: 500, headers: {}, errorId };
}
