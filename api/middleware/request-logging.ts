import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { maskEmail, maskEmailsInText, maskPhone, type Logger } from '../../core/logger/logger.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const USER_PATH_RE = /^(\/(?:v1|admin)\/users\/)([^/]+)/;

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A userId may be an e-mail address or a phone number's digits (D18): only a hint is logged. */
function maskUserId(segment: string): string {
  const userId = decoded(segment);
  if (userId.includes('@')) return maskEmail(userId);
  return /^\+?[0-9]{7,}$/.test(userId) ? maskPhone(userId) : segment;
}

/** The path without its query, with user ids and e-mail addresses masked. */
export function loggablePath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return maskEmailsInText(decodedEmails(path.replace(USER_PATH_RE, (_all, prefix: string, id: string) => `${prefix}${maskUserId(id)}`)));
}

/** `%40` spelled out, so an encoded address elsewhere in the path is seen by the masking too. */
function decodedEmails(path: string): string {
  return path.replace(/%40/gi, '@');
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
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
  });
}
