import { Router } from 'express';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import type { OutboxRepository } from '../../core/providers/outbox.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

function parseQuery(query: Record<string, unknown>): { to?: string; limit: number } {
  const { to, limit } = query;
  if (to !== undefined && (typeof to !== 'string' || to === '')) throw new ValidationError('[Invalid field to]');
  if (limit !== undefined && (typeof limit !== 'string' || !/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT)) {
    throw new ValidationError('[Invalid field limit]');
  }
  return { ...(to !== undefined ? { to } : {}), limit: limit === undefined ? DEFAULT_LIMIT : Number(limit) };
}

/** GET /admin/outbox?to=&limit=: what the outbox provider "sent", newest first. */
export function adminOutboxRoutes(ctx: ServiceContext, outbox: Pick<OutboxRepository, 'listOutboxMessages'>): Router {
  const router = Router();
  router.get('/admin/outbox', requireAdminToken(ctx), async (req, res) => {
    const messages = await outbox.listOutboxMessages(parseQuery(req.query));
    res.json(messages.map(({ id: _id, ...message }) => message));
  });
  return router;
}
