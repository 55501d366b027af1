import type { RequestHandler } from 'express';
import { UnavailableError } from '../../core/platform/errors/app-error.js';
import { HttpError } from '../errors/http-error.js';
import type { ServiceContext } from '../service-context.js';
import { presentedMatches, secretDigest } from '../../core/platform/secret-match.js';

/** The token a request presents: a Bearer token, or (for browser pages) a Basic password. */
function presentedToken(authorization: string, allowBasic: boolean): string | undefined {
  const bearer = /^Bearer (.+)$/i.exec(authorization);
  if (bearer) return bearer[1];
  const basic = allowBasic ? /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization) : null;
  if (!basic?.[1]) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/**
 * `Authorization: Bearer <ADMIN_TOKEN>` (or, with `allowBasic`, HTTP Basic with the token as the
 * password, so a browser can open the queue dashboard), compared in constant time. Without ADMIN_TOKEN the admin API is
 * off (503).
 */
export function requireAdminToken(ctx: ServiceContext, options: { allowBasic?: boolean } = {}): RequestHandler {
  const expected = ctx.config.adminToken === undefined ? undefined : secretDigest(ctx.config.adminToken);
  return (req, _res, next) => {
    if (!expected) throw new UnavailableError('Admin API disabled: ADMIN_TOKEN is not set');
    const token = presentedToken(req.get('authorization')?.trim() ?? '', options.allowBasic ?? false);
    if (!presentedMatches(token, expected)) {
      const headers: Record<string, string> = options.allowBasic
        ? { 'WWW-Authenticate': 'Basic realm="svc-identity admin", charset="UTF-8"' }
        : {};
      throw new HttpError('ADMIN_UNAUTHORIZED', 401, 'Invalid or missing admin token', { headers });
    }
    next();
  };
}
