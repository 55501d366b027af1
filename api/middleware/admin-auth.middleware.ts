import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError, ServiceUnavailableError } from '../../core/errors/app-error.js';
import type { ServiceContext } from '../service-context.js';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * `Authorization: Bearer <ADMIN_TOKEN>`. Both sides are hashed first so the constant-time
 * comparison also hides the token's length. Without ADMIN_TOKEN the admin API is off (503).
 */
export function requireAdminToken(ctx: ServiceContext): RequestHandler {
  const expected = ctx.config.adminToken === undefined ? undefined : digest(ctx.config.adminToken);
  return (req, _res, next) => {
    if (!expected) throw new ServiceUnavailableError('Admin API disabled: ADMIN_TOKEN is not set');
    const match = /^Bearer (.+)$/i.exec(req.get('authorization')?.trim() ?? '');
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      throw new AppError('ADMIN_UNAUTHORIZED', 401, 'Invalid or missing admin token');
    }
    next();
  };
}
