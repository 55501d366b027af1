import type { DeliveryFilter } from '../../core/deliveries/delivery-replay.types.js';
import { decodeCursor, LIST_PAGE_DEFAULT, LIST_PAGE_MAX } from '../../core/deliveries/delivery-replay.js';
import type { DeliveryState } from '../../core/deliveries/delivery.types.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';

const STATES: readonly DeliveryState[] = ['QUEUED', 'SENT', 'DELIVERED', 'FAILED'];
export const PROVIDER_RE = /^[a-z][a-z0-9-]{0,31}$/;
// An instant with its zone, as JSON writes them (`2026-11-25T06:00:00Z`, `...+05:30`).
const INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const invalid = (name: string) => new ValidationError(`[Invalid field ${name}]`);

/**
 * One optional text parameter. An empty one is refused, except from the page's form, which sends
 * an empty field for "any" (`blankIsAny`).
 */
function textOf(query: Record<string, unknown>, name: string, blankIsAny: boolean): string | undefined {
  const value = query[name];
  if (value === undefined || (blankIsAny && value === '')) return undefined;
  if (typeof value !== 'string') throw invalid(name);
  return value;
}

/** The list filters of `GET /admin/deliveries` (and the replay page): 422 naming the first bad one. */
export function parseDeliveryFilter(query: Record<string, unknown>, blankIsAny = false): DeliveryFilter {
  const text = (name: string) => textOf(query, name, blankIsAny);
  const state = text('state') ?? 'FAILED';
  if (!STATES.includes(state as DeliveryState)) throw invalid('state');
  const filter: DeliveryFilter = { state: state as DeliveryState };
  const since = text('since');
  if (since !== undefined) {
    const at = Date.parse(since);
    if (!INSTANT_RE.test(since) || Number.isNaN(at)) throw invalid('since');
    filter.since = new Date(at);
  }
  const channel = text('channel');
  if (channel !== undefined) {
    if (channel !== 'SMS' && channel !== 'EMAIL') throw invalid('channel');
    filter.channel = channel;
  }
  const provider = text('provider');
  if (provider !== undefined) {
    if (!PROVIDER_RE.test(provider)) throw invalid('provider');
    filter.provider = provider;
  }
  return filter;
}

/**
 * `cursor` and `limit` (1 to LIST_PAGE_MAX, default LIST_PAGE_DEFAULT). The cursor is checked here
 * with the other parameters, so the page can say a link is broken instead of failing later.
 */
export function parsePage(query: Record<string, unknown>, blankIsAny = false): { cursor?: string; limit: number } {
  const cursor = textOf(query, 'cursor', blankIsAny);
  if (cursor !== undefined) decodeCursor(cursor);
  const limitText = textOf(query, 'limit', blankIsAny);
  if (limitText !== undefined && (!/^[0-9]{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > LIST_PAGE_MAX)) {
    throw invalid('limit');
  }
  return { ...(cursor !== undefined ? { cursor } : {}), limit: limitText === undefined ? LIST_PAGE_DEFAULT : Number(limitText) };
}
