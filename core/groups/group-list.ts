import { decodePageCursor, encodePageCursor, pageOf, type ListPage } from '../platform/list-page.js';
import type { GroupOwner } from './group-owner.js';
import type { Group, GroupsRepository } from './groups.repository.js';

/** One page of one owner's groups (absent: the shared ones), by name; `cursor` is the previous page's `next`. */
export async function listGroupPage(
  groups: Pick<GroupsRepository, 'listGroupsAfter'>,
  owner: GroupOwner,
  page: { cursor?: string; limit: number },
): Promise<ListPage<Group>> {
  const after = page.cursor === undefined ? undefined : (decodePageCursor(page.cursor, 1)[0] as string);
  const rows = await groups.listGroupsAfter(owner, after, page.limit + 1);
  return pageOf(rows, page.limit, (last) => encodePageCursor([last.name]));
}
