import { Router } from 'express';
import type { ServiceContext } from '../service-context.js';

/**
 * The enterprise API under /v1. Nothing is applied globally: each route states its own checks
 * in the order of DECISIONS D3, e.g.
 * `router.post('/v1/users', requireBearer(ctx, 'users'), requireAllowedIp(ctx), ...jsonBody(ctx), validateBody(...), handler)`.
 */
export function v1Routes(_ctx: ServiceContext): Router {
  const router = Router();
  return router;
}
