import type { RequestHandler } from 'express';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import { HttpError } from '../errors/http-error.js';
import { USER_API_PATH } from '../routes/user-api-path.js';

/** The signed-in user's routes, the ones apps in other pages call with the user's token. */
const USER_ROUTES_RE = new RegExp(`^${USER_API_PATH}(/|$)`);
const PREFLIGHT_MAX_AGE_SECONDS = 600;
/**
 * The request headers a page may send besides the CORS-safelisted ones: the ones the client
 * library sends (test/integration/client-web-origins.test.ts preflights each request it makes).
 * Last-Event-ID is how the notification stream resumes after a break; fetch does not safelist it,
 * so without it here a page on another origin could never reconnect its stream.
 */
const ALLOWED_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Last-Event-ID'].join(', ');

/**
 * CORS for `/v1/me*`: a page may call them only from a web origin of a public client
 * (core/clients/web-origins.ts). The answer echoes that one origin, never `*`, and allows no
 * credentials: the user's bearer token is the only authority, so no cookie of the service rides
 * along. A preflight from any other origin is refused with 403, so the browser never sends the
 * call; a simple request from another origin is served without CORS headers, which the browser
 * does not let the page read. Mounted before the 405 check, since preflights use OPTIONS.
 */
export function userRoutesCors(clients: Pick<ClientLookup, 'isWebOriginOfAnyClient'>): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    if (!origin || !USER_ROUTES_RE.test(req.path)) return next();
    res.vary('Origin');
    const preflight = req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined;
    clients.isWebOriginOfAnyClient(origin).then((allowed) => {
      if (!allowed) {
        if (preflight) return next(new HttpError('ORIGIN_NOT_ALLOWED', 403, `Origin ${origin} may not call ${req.path} from a browser`));
        return next();
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After');
      if (!preflight) return next();
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      res.status(204).end();
    }, next);
  };
}
