import { USER_ID_RE } from './user-id.js';
import type { UserListPosition } from './users.repository.js';

const VERSION = 'u1';

/**
 * The opaque `next` of a user list page: where the next page starts, as `u1.<base64url JSON>`.
 * It names a position, not a grant: every page is read within the caller's enterprise whatever
 * the cursor says, so a hand-made cursor reaches nothing more than the list itself.
 */
export function encodeUserCursor(position: UserListPosition): string {
  return `${VERSION}.${Buffer.from(JSON.stringify([position.createdAt.getTime(), position.userId])).toString('base64url')}`;
}

/** The position a cursor names, or undefined when it is not one this service wrote. */
export function decodeUserCursor(cursor: string): UserListPosition | undefined {
  const [version, payload, ...rest] = cursor.split('.');
  if (version !== VERSION || payload === undefined || rest.length > 0 || !/^[A-Za-z0-9_-]{1,400}$/.test(payload)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [at, userId] = parsed as unknown[];
  if (!Number.isSafeInteger(at) || typeof userId !== 'string' || !USER_ID_RE.test(userId)) return undefined;
  return { createdAt: new Date(at as number), userId };
}
