import { Router } from 'express';
import { pingMongo } from '../../core/platform/db/mongo-connection.js';
import { pingRedis } from '../../core/platform/queues/redis-connection.js';
import { isDraining } from '../draining-state.js';
import { requireMetricsToken } from '../middleware/metrics-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';

export function healthRoutes(ctx: ServiceContext): Router {
  const router = Router();
  // Liveness: the process answers; dependencies are /readyz's business.
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (req, res) => {
    // A draining process must leave the load balancer's rotation at once, whatever its stores say.
    if (isDraining(req.app)) {
      res.status(503).json({ status: 'draining', checks: {}, down: [] });
      return;
    }
    const checks = await Promise.allSettled([pingMongo(ctx.mongo), pingRedis(ctx.redis)]);
    const [mongodb, redis] = checks.map((c) => (c.status === 'fulfilled' ? 'up' : 'down'));
    const down = [mongodb === 'down' ? 'mongodb' : undefined, redis === 'down' ? 'redis' : undefined].filter(Boolean);
    res
      .status(down.length === 0 ? 200 : 503)
      .json({ status: down.length === 0 ? 'ready' : 'unavailable', checks: { mongodb, redis }, down });
  });
  router.get('/metrics', requireMetricsToken(ctx), async (_req, res) => {
    res.set('Content-Type', ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
  return router;
}
