import { ValidationError } from './errors/app-error.js';

/**
 * Entries an admin list (clients, groups) answers at most at once, and by default: as many as
 * its callers got before lists were paged, for all but the largest deployments.
 */
export const ADMIN_LIST_PAGE_MAX = 500;

/** A page of a list in a fixed order, and the cursor of the page after it when there is one. */
export interface ListPage<T> {
  entries: T[];
  next?: string;
}

/** The position after an entry, as an opaque cursor: the entry's sort keys, in order. */
export function encodePageCursor(keys: string[]): string {
  return Buffer.from(JSON.stringify(keys), 'utf8').toString('base64url');
}

/** 422 `[Invalid field cursor]`: a cursor this service did not make. */
export function invalidCursor(): ValidationError {
  return new ValidationError('[Invalid field cursor]');
}

/** The sort keys of a cursor made by encodePageCursor; 422 `[Invalid field cursor]` for anything else. */
export function decodePageCursor(cursor: string, count: number): string[] {
  const invalid = invalidCursor;
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) throw invalid();
  let keys: unknown;
  try {
    keys = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(keys) || keys.length !== count || !keys.every((key) => typeof key === 'string')) throw invalid();
  return keys as string[];
}

/** Splits the `limit + 1` rows read for a page into the page and, when the extra row exists, the next cursor. */
export function pageOf<T>(rows: T[], limit: number, cursorAfter: (last: T) => string): ListPage<T> {
  const entries = rows.slice(0, limit);
  const last = entries[entries.length - 1];
  return { entries, ...(rows.length > limit && last !== undefined ? { next: cursorAfter(last) } : {}) };
}
