import express, { type RequestHandler } from 'express';
import { BadRequestError } from '../../core/platform/errors/app-error.js';
import { HttpError } from '../errors/http-error.js';
import type { ServiceContext } from '../service-context.js';
import { parsedWith } from './body-parser-errors.js';

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** `64kb` → 65536 (the forms the configuration accepts). */
function bytesOf(limit: string): number {
  const match = /^([0-9]+)(b|kb|mb)$/.exec(limit);
  if (!match) throw new Error(`invalid body limit ${limit}`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/**
 * A body declared larger than the limit is refused from its head alone. The parser would refuse it
 * too, but only after reading (and discarding) all of it; closing the connection instead means a
 * caller cannot tie the server up trickling megabytes nobody will look at.
 */
function refuseDeclaredTooLarge(maxBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      res.set('Connection', 'close');
      throw new HttpError('PAYLOAD_TOO_LARGE', 413, 'Request body is too large');
    }
    next();
  };
}

/**
 * JSON request bodies for our routes, checked in the order auth → 415 → 400 → 422: a content type other than
 * application/json is 415, unparseable JSON is 400 `Malformed request body` (errorHandler maps
 * the parser's error), and a body that is not a JSON object is 400 too. The limit is the small
 * one unless a route carries images (`limit: 'large'`); a body whose declared length is above it
 * is refused before a byte of it is read, and a compressed one is measured as inflated.
 */
export function jsonBody(ctx: ServiceContext, options: { limit?: 'small' | 'large' | `${number}kb` } = {}): RequestHandler[] {
  const limit =
    options.limit === 'large'
      ? ctx.config.bodyLimit
      : options.limit === undefined || options.limit === 'small'
        ? ctx.config.smallBodyLimit
        : options.limit;
  const parse = parsedWith(express.json({ limit, strict: true, type: () => true }));
  const requireJsonType: RequestHandler = (req, _res, next) => {
    const contentType = req.get('content-type') ?? '';
    if (!req.is('application/json')) {
      throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 415, `Content type '${contentType}' not supported`);
    }
    next();
  };
  const requireObject: RequestHandler = (req, _res, next) => {
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('Malformed request body');
    next();
  };
  return [requireJsonType, refuseDeclaredTooLarge(bytesOf(limit)), parse, requireObject];
}
