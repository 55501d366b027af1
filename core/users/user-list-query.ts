import { ValidationError } from '../platform/errors/app-error.js';
import { decodeUserCursor } from './user-list-cursor.js';
import { USER_STATUSES, type UserStatus } from './user.types.js';
import type { UserListQuery } from './users.repository.js';

export const USER_LIST_DEFAULT_LIMIT = 50;
export const USER_LIST_MAX_LIMIT = 200;

const invalid = (field: string) => new ValidationError(`[Invalid field ${field}]`, { error: 'Invalid data.' });

/** A group name as groups are created (no comma, no blank at either end). */
const GROUP_RE = /^[^,\s]([^,]*[^,\s])?$/;

/**
 * `?status=&group=&limit=&cursor=` of the user list, each optional and given at most once;
 * 422 `[Invalid field <name>]` on the first bad one, in that order.
 */
export function parseUserListQuery(query: Record<string, unknown>): Omit<UserListQuery, 'enterpriseId'> {
  const single = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalid(name);
    return value;
  };
  const status = single('status');
  if (status !== undefined && !(USER_STATUSES as readonly string[]).includes(status)) throw invalid('status');
  const group = single('group');
  if (group !== undefined && (group.length > 100 || !GROUP_RE.test(group))) throw invalid('group');
  const limitText = single('limit');
  if (limitText !== undefined && !/^[0-9]{1,3}$/.test(limitText)) throw invalid('limit');
  const limit = limitText === undefined ? USER_LIST_DEFAULT_LIMIT : Number(limitText);
  if (limit < 1 || limit > USER_LIST_MAX_LIMIT) throw invalid('limit');
  const cursor = single('cursor');
  const after = cursor === undefined ? undefined : decodeUserCursor(cursor);
  if (cursor !== undefined && after === undefined) throw invalid('cursor');
  return {
    ...(status !== undefined ? { status: status as UserStatus } : {}),
    ...(group !== undefined ? { group } : {}),
    ...(after !== undefined ? { after } : {}),
    limit,
  };
}
