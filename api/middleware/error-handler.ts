import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, BadRequestError } from '../../core/errors/app-error.js';
import { toErrorResponse } from '../../core/errors/error-body.js';
import type { Logger } from '../../core/logger/logger.js';

/** Errors raised by body-parser, translated to the documented statuses and messages. */
export function fromBodyParser(err: { type?: string; status?: number }): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new BadRequestError('Malformed request body');
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 413, 'Request body is too large');
    case 'request.aborted':
      return new BadRequestError('Request aborted');
    default:
      return undefined;
  }
}

export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new AppError('ROUTE_NOT_FOUND', 404, `No route for ${req.method} ${req.path}`);
  };
}

/** The one place HTTP errors become response bodies (DESIGN.md error model). */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const err = (rawErr && typeof rawErr === 'object' && fromBodyParser(rawErr as { type?: string })) || rawErr;
    const response = toErrorResponse(err, req.originalUrl.split('?')[0] ?? req.path);
    if (response.errorId) {
      (req.log ?? logger).error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
    }
    res.status(response.status).set(response.headers).json(response.body);
  };
}
