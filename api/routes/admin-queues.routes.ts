import { Router, type Express } from 'express';
import { loadOnFirstUse } from '../../core/platform/load-on-first-use.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { requireSameOriginForWrites } from '../middleware/same-origin.middleware.js';
import type { ServiceContext } from '../service-context.js';

export const QUEUES_DASHBOARD_PATH = '/admin/queues';

/**
 * The queue dashboard (@bull-board) for operators: every queue's jobs by state, with retry and
 * clean actions. Behind the admin token; a browser is asked for it with HTTP Basic (any user
 * name, the token as password). Because a browser then adds those credentials to any request,
 * even one a foreign page makes it send, actions (retry, clean, add) must come from this origin.
 */
export function adminQueuesRoutes(ctx: ServiceContext): Router {
  // bull-board and what it brings (lodash among them) are loaded when an operator first opens the
  // dashboard, past the admin token: about 3 MB of heap and 6 MB of RSS that an API process
  // serving only the API never needs.
  const loadDashboard = loadOnFirstUse(async () => {
    const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
      import('@bull-board/api'),
      import('@bull-board/api/bullMQAdapter'),
      import('@bull-board/express'),
    ]);
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(QUEUES_DASHBOARD_PATH);
    createBullBoard({ queues: Object.values(ctx.queues).map((queue) => new BullMQAdapter(queue)), serverAdapter });
    // The adapter is an Express app of its own, which would announce itself in X-Powered-By.
    const dashboard = serverAdapter.getRouter() as Express;
    dashboard.disable('x-powered-by');
    return dashboard;
  });
  const router = Router();
  router.use(
    QUEUES_DASHBOARD_PATH,
    requireAdminToken(ctx, { allowBasic: true }),
    requireSameOriginForWrites(ctx.config.publicUrl),
    (req, res, next) => {
      loadDashboard()
        .then((dashboard) => dashboard(req, res, next))
        .catch(next);
    },
  );
  return router;
}
