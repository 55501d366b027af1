import { decodePageCursor, encodePageCursor, invalidCursor, pageOf, type ListPage } from '../platform/list-page.js';
import type { Group, GroupListPosition, GroupsRepository } from './groups.repository.js';

const OBJECT_ID_RE = /^[0-9a-f]{24}$/;

/**
 * One page of a group list, by name (one name's groups in a fixed order, by id): one enterprise's
 * own groups, or every group, shared and owned, when `enterpriseId` is absent. `cursor` is the
 * previous page's `next`.
 */
export async function listGroupPage(
  groups: Pick<GroupsRepository, 'listGroupsAfter'>,
  enterpriseId: string | undefined,
  page: { cursor?: string; limit: number },
): Promise<ListPage<Group>> {
  const rows = await groups.listGroupsAfter(enterpriseId, page.cursor === undefined ? undefined : positionOf(page.cursor), page.limit + 1);
  const { entries, next } = pageOf(rows, page.limit, ({ position }) => encodePageCursor([position.name, position.id]));
  return { entries: entries.map(({ group }) => group), ...(next === undefined ? {} : { next }) };
}

function positionOf(cursor: string): GroupListPosition {
  const [name, id] = decodePageCursor(cursor, 2) as [string, string];
  if (!OBJECT_ID_RE.test(id)) throw invalidCursor();
  return { name, id };
}
