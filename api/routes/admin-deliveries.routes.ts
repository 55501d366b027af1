import { Router } from 'express';
import type { DeliveryReplay } from '../../core/deliveries/delivery-replay.js';
import type { DeliveryFilter, DeliveryView, ReplayResult, ReplaySelection } from '../../core/deliveries/delivery-replay.types.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { parseDeliveryFilter, parsePage } from './delivery-filter.query.js';

interface ReplayBody {
  ids?: string[];
  filter?: { state?: 'FAILED'; since?: string; channel?: 'SMS' | 'EMAIL'; provider?: string };
  dryRun?: boolean;
  comments?: string;
}

const toJson = (view: DeliveryView) => ({
  ...view,
  queuedAt: view.queuedAt.toISOString(),
  updatedAt: view.updatedAt.toISOString(),
  notAfter: view.notAfter.toISOString(),
});

/** The answer of a replay (and of the page's steps): views with ISO dates, and the counts. */
export function replayResponse(result: ReplayResult) {
  return {
    dryRun: result.dryRun,
    counts: {
      selected: result.queued.length + result.skipped.length,
      queued: result.queued.length,
      skipped: result.skipped.length,
    },
    queued: result.queued.map(toJson),
    skipped: result.skipped.map(({ skip, ...view }) => ({
      ...(view.queuedAt ? toJson(view as DeliveryView) : view),
      skip,
    })),
    more: result.more,
  };
}

function selectionOf(body: ReplayBody): ReplaySelection {
  if (body.ids) return { ids: body.ids };
  const filter: DeliveryFilter = { state: 'FAILED' };
  const { since, channel, provider } = body.filter ?? {};
  if (since !== undefined) filter.since = new Date(since);
  if (channel !== undefined) filter.channel = channel;
  if (provider !== undefined) filter.provider = provider;
  return { filter };
}

/**
 * Operators' view of deliveries and the replay of FAILED ones (admin token). The answers never
 * carry a code; addresses are masked as in the logs.
 */
export function adminDeliveriesRoutes(ctx: ServiceContext, replay: DeliveryReplay): Router {
  const router = Router();

  router.get('/admin/deliveries', requireAdminToken(ctx), async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const page = await replay.list(parseDeliveryFilter(query), parsePage(query));
    res.json({ deliveries: page.deliveries.map(toJson), ...(page.next ? { next: page.next } : {}) });
  });

  router.post(
    '/admin/deliveries/replay',
    requireAdminToken(ctx),
    ...jsonBody(ctx),
    validateBody('admin-deliveries.replay.json'),
    async (req, res) => {
      const body = req.body as ReplayBody;
      if ((body.ids === undefined) === (body.filter === undefined)) throw new ValidationError('Give either ids or filter (not both)');
      const result = await replay.replay({
        selection: selectionOf(body),
        dryRun: body.dryRun ?? true,
        ...(body.comments !== undefined ? { comments: body.comments } : {}),
      });
      res.json(replayResponse(result));
    },
  );

  return router;
}
