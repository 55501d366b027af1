import express, { type RequestHandler } from 'express';
import { AppError, BadRequestError } from '../../core/errors/app-error.js';
import type { ServiceContext } from '../service-context.js';

/**
 * JSON request bodies for our routes, checked in the order auth → 415 → 400 → 422: a content type other than
 * application/json is 415, unparseable JSON is 400 `Malformed request body` (errorHandler maps
 * the parser's error), and a body that is not a JSON object is 400 too.
 */
export function jsonBody(ctx: ServiceContext): RequestHandler[] {
  const parse = express.json({ limit: ctx.config.bodyLimit, strict: true, type: () => true });
  const requireJsonType: RequestHandler = (req, _res, next) => {
    const contentType = req.get('content-type') ?? '';
    if (!req.is('application/json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, `Content type '${contentType}' not supported`);
    }
    next();
  };
  const requireObject: RequestHandler = (req, _res, next) => {
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('Malformed request body');
    next();
  };
  return [requireJsonType, parse, requireObject];
}
