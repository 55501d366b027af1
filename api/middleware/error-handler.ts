import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isStoreUnavailable } from '../../core/db/store-unavailable.js';
import { AppError, ServiceUnavailableError } from '../../core/errors/app-error.js';
import { toErrorResponse } from '../../core/errors/error-body.js';
import type { Logger } from '../../core/logger/logger.js';
import { fromBodyParser } from './body-parser-errors.js';

export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new AppError('ROUTE_NOT_FOUND', 404, `No route for ${req.method} ${req.path}`);
  };
}

/** Seconds a client is asked to wait when a store is down: about one reconnect attempt. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** The one place HTTP errors become response bodies: `{timestamp, status, error, message, path}`, or RFC 6750 bodies for token errors. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    let err = (rawErr && typeof rawErr === 'object' && fromBodyParser(rawErr as { type?: string })) || rawErr;
    if (isStoreUnavailable(rawErr)) {
      (req.log ?? logger).warn({ err: (rawErr as Error).message }, 'database unavailable');
      err = new ServiceUnavailableError('Service unavailable: the database is not reachable; retry later', {
        headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) },
      });
    }
    const response = toErrorResponse(err, req.originalUrl.split('?')[0] ?? req.path);
    if (response.errorId) {
      (req.log ?? logger).error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
    }
    res.status(response.status).set(response.headers).json(response.body);
  };
}
