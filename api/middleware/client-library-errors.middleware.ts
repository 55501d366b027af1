import type { ErrorRequestHandler } from 'express';
import { toErrorResponse } from '../../core/platform/errors/error-body.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { clientLibraryCode } from '../../core/notifications/client-library-codes.js';
import { toEdgeError } from './edge-errors.js';

/**
 * Errors of the user API (`/v1/me/...`): the usual bodies plus `code`, the client library's
 * result code the refusal maps to, so the app knows whether to let the user retry.
 */
export function clientLibraryErrors(logger: Logger): ErrorRequestHandler {
  return (rawErr: unknown, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const err = toEdgeError(rawErr, req, logger);
    const response = toErrorResponse(err, req.originalUrl.split('?')[0] ?? req.path);
    if (response.errorId) (req.log ?? logger).error({ err: rawErr, errorId: response.errorId }, 'unexpected error');
    const error = typeof response.body.error === 'string' ? response.body.error : undefined;
    res
      .status(response.status)
      .set(response.headers)
      .json({ ...response.body, code: clientLibraryCode(response.status, error) });
  };
}
