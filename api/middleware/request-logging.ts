import { randomUUID } from 'node:crypto';
import { maskEmail, maskEmailsInText, maskPhone, type Logger } from '../../core/platform/logger/logger.js';
import type { EdgeRequest, EdgeStep } from './edge-step.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const USER_PATH_RE = /^(\/(?:v1|admin)\/users\/)([^/]+)/;
// Probes and scrapes arrive every few seconds and would drown the requests that matter.
const NOT_LOGGED = new Set(['/healthz', '/metrics']);

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

function describe(req: EdgeRequest, url = req.originalUrl ?? req.url ?? ''): { id?: string; method?: string; path: string } {
  return { id: req.id, method: req.method, path: loggablePath(url) };
}

/**
 * The logger for lines about one request (its errors): they carry the request's id, method and
 * path, as its access log line does. Built only when such a line is written, not per request.
 */
export function requestLogger(req: EdgeRequest, logger: Logger): Logger {
  return req.id === undefined ? logger : logger.child({ req: describe(req) });
}

/**
 * One log line per request, written when its answer is finished or the caller went away, with a
 * request id (the caller's X-Request-Id when well formed, else a new one, echoed in the answer).
 * Answers of 500 and above are logged at `error`; the error itself has its own line with the same
 * request id. No child logger is made per request: that was most of a token grant's logging CPU.
 */
export function requestLogging(logger: Logger): EdgeStep {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const url = req.url ?? '';
    if (NOT_LOGGED.has(url)) return next();
    const startedAt = Date.now();
    // 'close' comes once per answer, after 'finish' when the answer was written in full.
    res.once('close', () => {
      const responseTime = Date.now() - startedAt;
      // An answer never written has no status (Koa's placeholder 404 would be a lie).
      if (!res.writableFinished) return logger.info({ req: describe(req, url), responseTime }, 'request aborted');
      const line = { req: describe(req, url), res: { statusCode: res.statusCode }, responseTime };
      if (res.statusCode >= 500) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    });
    next();
  };
}
