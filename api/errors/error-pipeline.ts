import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { unavailableStoreError } from '../../core/platform/db/store-unavailable.js';
import { UnavailableError } from '../../core/platform/errors/app-error.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { fromBodyParser } from '../middleware/body-parser-errors.js';
import type { EdgeRequest } from '../middleware/edge-step.js';
import { requestLogger } from '../middleware/request-logging.js';
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
  const unavailable = unavailableStoreError(rawErr);
  if (unavailable) {
    // The message, and the name and code of the error that matched (it may be a cause): a closed
    // connection, a cleared pool and an unreachable deployment read alike otherwise.
    log.warn({ err: (rawErr as Error).message, errName: unavailable.name, errCode: unavailable.code }, 'database unavailable');
    return new UnavailableError('Service unavailable: the database is not reachable; retry later', {
      retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
    });
  }
  return (rawErr && typeof rawErr === 'object' && fromBodyParser(rawErr as { type?: string })) || rawErr;
}

/** The path an error body names: the URL as it arrived, without its query. */
function pathOf(req: EdgeRequest): string {
  return (req.originalUrl ?? req.url ?? '').split('?')[0] ?? '';
}

/**
 * Writes an error answer with Node's own response, so that the token lane (api/token-lane.ts),
 * which runs without Express, answers its errors exactly as the app does. `extra` joins the body
 * (the client library's `code`).
 */
export function sendErrorResponse(res: ServerResponse, response: ErrorResponse, extra: Record<string, unknown> = {}): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify({ ...response.body, ...extra }));
}

/**
 * The one pipeline every error of a request goes through: its meaning, then its HTTP form
 * (api/errors/http-error-mapping.ts) in the enterprise body. Each renderer below only reshapes it.
 */
export function errorResponseOf(rawErr: unknown, req: EdgeRequest, logger: Logger): ErrorResponse {
  const log = requestLogger(req, logger);
  const response = toErrorResponse(meaningOf(rawErr, log), pathOf(req));
  if (response.errorId) log.error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
  return response;
}

/** The enterprise API's errors: `{timestamp, status, error, message, path}`, or RFC 6750 bodies for token errors. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    sendErrorResponse(res, errorResponseOf(rawErr, req, logger));
  };
}

/**
 * The same answer for a request served without Express (the token lane, api/token-lane.ts); an
 * answer already under way cannot change, so its connection is cut, as Express does.
 */
export function answerError(logger: Logger): (rawErr: unknown, req: EdgeRequest, res: ServerResponse) => void {
  return (rawErr, req, res) => {
    if (res.headersSent) res.destroy();
    else sendErrorResponse(res, errorResponseOf(rawErr, req, logger));
  };
}

/**
 * Errors of the user API (`/v1/me` and under it): the usual bodies plus `code`, the client
 * library's result code the refusal maps to, so the app knows whether to let the user retry.
 * Mounted once, at the app's end (api/app.ts), so no refusal there goes without it.
 */
export function clientLibraryErrors(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const response = errorResponseOf(rawErr, req, logger);
    const error = typeof response.body.error === 'string' ? response.body.error : undefined;
    sendErrorResponse(res, response, { code: clientLibraryCode(response.status, error) });
  };
}

/**
 * The sign-in pages' errors, rendered as an HTML page by the caller: every failure there is
 * logged with a reference the page shows, and is the service's fault (at least 500), never the
 * JSON body of the API.
 */
export function errorPageOf(
  rawErr: unknown,
  req: EdgeRequest,
  logger: Logger,
): { status: number; headers: Record<string, string>; errorId: string } {
  const log = requestLogger(req, logger);
  const response = toErrorResponse(meaningOf(rawErr, log), pathOf(req));
  const errorId = response.errorId ?? randomUUID();
  log.error({ err: rawErr, errorId }, 'sign-in page failed');
  return response.status >= 500 ? { status: response.status, headers: response.headers, errorId } : { status: 500, headers: {}, errorId };
}
