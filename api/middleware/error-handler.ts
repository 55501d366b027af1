import type { RequestHandler } from 'express';
import { HttpError } from '../errors/http-error.js';

/** The last route: whatever no router answered is 404 in the enterprise error body. */
export function notFoundHandler(): RequestHandler {
  return (req) => {
    throw new HttpError('ROUTE_NOT_FOUND', 404, `No route for ${req.method} ${req.path}`);
  };
}
