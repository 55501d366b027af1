import express, { Router, type Response } from 'express';
import { REPLAY_MAX, type DeliveryReplay } from '../../core/deliveries/delivery-replay.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { createAdminFormTokens } from '../middleware/admin-form-token.js';
import { parsedWith } from '../middleware/body-parser-errors.js';
import { requireSameOriginForWrites } from '../middleware/same-origin.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { parseDeliveryFilter, parsePage } from './delivery-filter.query.js';
import { filterAsTyped, renderReplayPage, type ReplayPageData } from './delivery-replay-page.js';

export const REPLAY_PAGE_PATH = '/admin/delivery-replay';
const ID_RE = /^[A-Za-z0-9._:@=-]{1,200}$/;

/**
 * The operators' page for failed deliveries: list with filters, pick, preview (a dry run saying
 * what would be sent and what skipped, and why), confirm. Server-rendered forms, no script.
 * Opened with the admin token (HTTP Basic in a browser, as the queue dashboard). A browser adds
 * Basic credentials to a form another site makes it post, so each post must come from this
 * origin and carry the form token of a page served here.
 */
export function adminDeliveryReplayPageRoutes(ctx: ServiceContext, replay: DeliveryReplay): Router {
  const router = Router();
  const tokens = createAdminFormTokens(ctx.config.adminToken ?? '', 'delivery-replay');
  // More fields than 100 ids and the rest need is a malformed form (400), like one that does not parse.
  const form = parsedWith(express.urlencoded({ extended: false, limit: '32kb', parameterLimit: REPLAY_MAX + 5 }));
  const auth = requireAdminToken(ctx, { allowBasic: true });
  const sameOrigin = requireSameOriginForWrites(ctx.config.publicUrl);

  const send = (res: Response, status: number, data: Omit<ReplayPageData, 'csrf'>) => {
    const page = renderReplayPage({ ...data, csrf: tokens.issue() });
    res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': page.csp }).send(page.html);
  };

  /** The ids a form posted, or why they cannot be taken. */
  const idsOf = (body: Record<string, unknown>): string[] | string => {
    const raw = body.ids;
    const ids = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (ids.length === 0) return 'Select at least one delivery.';
    if (ids.length > REPLAY_MAX) return `Select at most ${REPLAY_MAX} deliveries at a time.`;
    if (!ids.every((id): id is string => typeof id === 'string' && ID_RE.test(id)))
      return 'The selection is not valid. Open the page again.';
    return [...new Set(ids)];
  };

  const checkForm = (body: Record<string, unknown>, res: Response): boolean => {
    if (tokens.isValid(body.csrf)) return true;
    send(res, 403, {
      title: 'Failed deliveries',
      error: 'This form has expired or did not come from this page. Nothing was sent. Open the page again.',
    });
    return false;
  };

  router.get(REPLAY_PAGE_PATH, auth, async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const typed = filterAsTyped(query);
    let filter;
    let page;
    try {
      filter = parseDeliveryFilter({ ...query, state: 'FAILED' }, true);
      page = parsePage(query, true);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const field = /\[Invalid field (\w+)\]/.exec(err.message)?.[1] ?? 'filter';
      const hint = field === 'since' ? ' Write an instant with its zone, such as 2026-11-25T06:00:00Z.' : '';
      // The cursor comes from the page's own "Older failures" link, not from a filter the operator typed.
      const error = field === 'cursor' ? 'This page link is not valid. Open the page again.' : `The ${field} filter is not valid.${hint}`;
      send(res, 422, {
        title: 'Failed deliveries',
        error,
        listing: { filter: typed, rows: [] },
      });
      return;
    }
    const found = await replay.list(filter, page);
    const nextQuery = new URLSearchParams({ ...Object.fromEntries(Object.entries(typed).filter(([, v]) => v !== '')) });
    if (found.next) nextQuery.set('cursor', found.next);
    send(res, 200, {
      title: 'Failed deliveries',
      listing: { filter: typed, rows: found.deliveries, ...(found.next ? { next: `${REPLAY_PAGE_PATH}?${nextQuery.toString()}` } : {}) },
    });
  });

  router.post(`${REPLAY_PAGE_PATH}/preview`, auth, sameOrigin, form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!checkForm(body, res)) return;
    const ids = idsOf(body);
    if (typeof ids === 'string')
      return send(res, 422, { title: 'Failed deliveries', error: ids, listing: { filter: filterAsTyped({}), rows: [] } });
    const result = await replay.replay({ selection: { ids }, dryRun: true });
    send(res, 200, {
      title: 'Replay preview',
      notice: `Dry run: nothing has been sent yet. ${result.queued.length} would be sent again, ${result.skipped.length} skipped.`,
      result: { replay: result, confirm: result.queued.length > 0 },
    });
  });

  router.post(`${REPLAY_PAGE_PATH}/confirm`, auth, sameOrigin, form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!checkForm(body, res)) return;
    const ids = idsOf(body);
    if (typeof ids === 'string')
      return send(res, 422, { title: 'Failed deliveries', error: ids, listing: { filter: filterAsTyped({}), rows: [] } });
    const comments = typeof body.comments === 'string' && body.comments.trim() !== '' ? body.comments.trim().slice(0, 1000) : undefined;
    const result = await replay.replay({ selection: { ids }, dryRun: false, ...(comments ? { comments } : {}) });
    send(res, 200, {
      title: 'Replay done',
      done: `${result.queued.length} queued to be sent again, ${result.skipped.length} skipped. Recorded in the activity record.`,
      result: { replay: result, confirm: false },
    });
  });

  return router;
}
