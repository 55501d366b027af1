import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../core/logger/logger.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** One log line per request with a request id (the caller's X-Request-Id when well formed). */
export function requestLogging(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // The URL may hold identifiers; query strings are dropped so no address leaks into logs.
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
  });
}
