import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { maskEmail, maskEmailsInText, maskPhone, serializeError, type Logger } from '../../core/platform/logger/logger.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const USER_PATH_RE = /^(\/(?:v1|admin)\/users\/)([^/]+)/;

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** A userId may be an e-mail address or a phone number's digits: only a hint is logged. */
function maskUserId(userId: string): string {
  if (userId.includes('@')) return maskEmail(userId);
  return /^\+?[0-9]{7,}$/.test(userId) ? maskPhone(userId) : userId;
}

/** The path without its query, decoded, with user ids and e-mail addresses masked. */
export function loggablePath(url: string): string {
  const path = decoded(url.split('?')[0] ?? '');
  return maskEmailsInText(path.replace(USER_PATH_RE, (_all, prefix: string, id: string) => `${prefix}${maskUserId(id)}`));
}

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
    // The URL may hold identifiers: query strings are dropped, user ids and addresses masked.
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: loggablePath(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
  });
}
