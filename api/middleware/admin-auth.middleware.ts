import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError } from '../../core/errors/app-error.js';
import type { ServiceContext } from '../service-context.js';

// Hashing first gives equal-length buffers, so the comparison time says nothing about the token.
const digest = (value: string) => createHash('sha256').update(value).digest();

/** Admin routes: `Authorization: Bearer <ADMIN_TOKEN>`; anything else is 401 in the D1 body. */
export function requireAdmin(ctx: ServiceContext): RequestHandler {
  const expected = ctx.config.adminToken === undefined ? undefined : digest(ctx.config.adminToken);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!expected || !match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      next(new AppError('UNAUTHORIZED', 401, 'Unauthorized'));
      return;
    }
    next();
  };
}
