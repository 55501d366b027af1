import { decodePageCursor, encodePageCursor, pageOf, type ListPage } from '../platform/list-page.js';
import type { Group, GroupsRepository } from './groups.repository.js';

/** One page of every group, by name; `cursor` is the previous page's `next`. */
export async function listGroupPage(
  groups: Pick<GroupsRepository, 'listGroupsAfter'>,
  page: { cursor?: string; limit: number },
): Promise<ListPage<Group>> {
  const after = page.cursor === undefined ? undefined : (decodePageCursor(page.cursor, 1)[0] as string);
  const rows = await groups.listGroupsAfter(after, page.limit + 1);
  return pageOf(rows, page.limit, (last) => encodePageCursor([last.name]));
}
