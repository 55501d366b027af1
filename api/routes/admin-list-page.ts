import type { Request, Response } from 'express';
import { ADMIN_LIST_PAGE_MAX } from '../../core/platform/list-page.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';

/**
 * `limit` (1 to ADMIN_LIST_PAGE_MAX, which is also the default) and `cursor` of an admin list that
 * answers a JSON array, as it did before it was paged; 422 naming the first bad one.
 */
export function parseAdminListPage(req: Request): { cursor?: string; limit: number } {
  const { limit, cursor } = req.query;
  if (cursor !== undefined && typeof cursor !== 'string') throw new ValidationError('[Invalid field cursor]');
  if (
    limit !== undefined &&
    (typeof limit !== 'string' || !/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > ADMIN_LIST_PAGE_MAX)
  ) {
    throw new ValidationError('[Invalid field limit]');
  }
  return { ...(cursor !== undefined ? { cursor } : {}), limit: limit === undefined ? ADMIN_LIST_PAGE_MAX : Number(limit) };
}

/**
 * The array stays the body, so the next page is named in a `Link: <...>; rel="next"` header
 * (RFC 8288), a path on this service with the same limit; none on the last page.
 */
export function linkNextPage(
  res: Response,
  path: string,
  limit: number,
  next: string | undefined,
  filters: Record<string, string> = {},
): void {
  if (next === undefined) return;
  const query = new URLSearchParams({ ...filters, limit: String(limit), cursor: next });
  res.set('Link', `<${path}?${query.toString()}>; rel="next"`);
}
