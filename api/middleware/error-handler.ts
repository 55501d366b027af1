import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError } from '../../core/platform/errors/app-error.js';
import { toErrorResponse } from '../../core/platform/errors/error-body.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { toEdgeError } from './edge-errors.js';

export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new AppError('ROUTE_NOT_FOUND', 404, `No route for ${req.method} ${req.path}`);
  };
}

/** The one place HTTP errors become response bodies: `{timestamp, status, error, message, path}`, or RFC 6750 bodies for token errors. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const err = toEdgeError(rawErr, req, logger);
    const response = toErrorResponse(err, req.originalUrl.split('?')[0] ?? req.path);
    if (response.errorId) {
      (req.log ?? logger).error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
    }
    res.status(response.status).set(response.headers).json(response.body);
  };
}
