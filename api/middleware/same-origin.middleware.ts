import type { RequestHandler } from 'express';
import { HttpError } from '../errors/http-error.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the Origin header names this very site (scheme, host and port as the browser used them). */
function isOwnOrigin(origin: string, host: string | undefined, publicOrigin: string): boolean {
  if (origin === publicOrigin) return true;
  if (!host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}

/**
 * Refuses state-changing requests a browser sends from another site. A browser adds Basic
 * credentials (and cookies) to a cross-site form POST by itself, so such a request must prove it
 * comes from our own pages: `Sec-Fetch-Site: same-origin`, or, from browsers without Fetch
 * Metadata, an `Origin` naming this site. A request carrying neither and authenticated with a
 * Bearer token comes from a program (a browser never adds one by itself) and is let through.
 */
export function requireSameOriginForWrites(publicUrl: string): RequestHandler {
  const publicOrigin = new URL(publicUrl).origin;
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const fetchSite = req.get('sec-fetch-site');
    const origin = req.get('origin');
    const sameOrigin =
      fetchSite !== undefined
        ? fetchSite === 'same-origin'
        : origin !== undefined
          ? isOwnOrigin(origin, req.get('host'), publicOrigin)
          : /^Bearer /i.test(req.get('authorization') ?? '');
    if (!sameOrigin) throw new HttpError('CROSS_SITE_REQUEST', 403, 'Cross-site request refused');
    next();
  };
}
