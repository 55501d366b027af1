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
 * body-parser reads a zero-length body as `{}` (a courtesy to clients that forget the body), which
 * would reach the field checks as a body missing every field (422). Zero bytes are not JSON: the
 * parser's own error type makes them 400 `Malformed request body`, whatever the framing
 * (`Content-Length: 0`, an empty chunked body, a compressed body that inflates to nothing).
 */
const refuseEmpty = (_req: unknown, _res: unknown, body: Buffer) => {
  if (body.length === 0) throw Object.assign(new Error('empty body'), { type: 'entity.parse.failed' });
};

// The media type alone, for a request without any body framing (see requireJsonType).
const JSON_MEDIA_TYPE = /^application\/json[ \t]*(;|$)/i;

/**
 * JSON request bodies for our routes, checked in the order auth → 415 → 400 → 422: a content type other than
 * application/json is 415, unparseable JSON is 400 `Malformed request body` (errorHandler maps
 * the parser's error), and a body that is empty or not a JSON object is 400 too. The limit is the
 * small one unless a route carries images (`limit: 'large'`); a body whose declared length is
 * above it is refused before a byte of it is read, and a compressed one is measured as inflated.
 */
export function jsonBody(ctx: ServiceContext, options: { limit?: 'small' | 'large' | `${number}kb` } = {}): RequestHandler[] {
  const limit =
    options.limit === 'large'
      ? ctx.config.bodyLimit
      : options.limit === undefined || options.limit === 'small'
        ? ctx.config.smallBodyLimit
        : options.limit;
  const parse = parsedWith(express.json({ limit, strict: true, type: () => true, verify: refuseEmpty }));
  const requireJsonType: RequestHandler = (req, _res, next) => {
    const contentType = req.get('content-type') ?? '';
    // req.is() knows no type for a request without Content-Length or Transfer-Encoding (curl -X
    // POST with no data): its body is zero bytes, so a JSON one is malformed (400), not a 415.
    if (req.get('content-length') === undefined && req.get('transfer-encoding') === undefined && JSON_MEDIA_TYPE.test(contentType)) {
      throw new BadRequestError('Malformed request body');
    }
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
