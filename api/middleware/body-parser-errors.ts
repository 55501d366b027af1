import type { RequestHandler } from 'express';
import { BadRequestError } from '../../core/platform/errors/app-error.js';
import { HttpError } from '../errors/http-error.js';

interface ParserError {
  type?: string;
  status?: number;
}

/** Errors raised by body-parser, translated to the documented statuses and messages. */
export function fromBodyParser(err: ParserError): BadRequestError | HttpError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new BadRequestError('Malformed request body');
    case 'entity.too.large':
      return new HttpError('PAYLOAD_TOO_LARGE', 413, 'Request body is too large');
    // A form with more fields than its route reads (body-parser's `parameterLimit`).
    case 'parameters.too.many':
      return new HttpError('PAYLOAD_TOO_LARGE', 413, 'Request body has too many fields');
    case 'request.aborted':
      return new BadRequestError('Request aborted');
    default:
      return undefined;
  }
}

/**
 * Runs a body parser so that whatever it refuses is the caller's fault with a documented answer:
 * a gzip, deflate or br body that does not decompress reaches us as a bare zlib error (no `type`),
 * which must be 400 like any other malformed body, not a 500 with an error log line.
 */
export function parsedWith(parser: RequestHandler): RequestHandler {
  return (req, res, next) => {
    parser(req, res, (err?: unknown) => {
      if (err === undefined || err === null || err === 'route' || err === 'router') return next(err as undefined);
      const known = typeof err === 'object' ? fromBodyParser(err as ParserError) : undefined;
      const status = typeof err === 'object' ? (err as ParserError).status : undefined;
      next(known ?? (status !== undefined && status >= 400 && status < 500 ? new BadRequestError('Malformed request body') : err));
    });
  };
}
