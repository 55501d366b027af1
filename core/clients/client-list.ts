import { decodePageCursor, encodePageCursor, invalidCursor, pageOf, type ListPage } from '../platform/list-page.js';
import type { Client, ClientsRepository } from './clients.repository.js';

/** One page of every client, oldest first (then by id); `cursor` is the previous page's `next`. */
export async function listClientPage(
  clients: Pick<ClientsRepository, 'listClientsAfter'>,
  page: { cursor?: string; limit: number },
): Promise<ListPage<Client>> {
  const after = page.cursor === undefined ? undefined : positionOf(page.cursor);
  const rows = await clients.listClientsAfter(after, page.limit + 1);
  return pageOf(rows, page.limit, (last) => encodePageCursor([String(last.createdAt.getTime()), last.clientId]));
}

function positionOf(cursor: string): { createdAt: Date; clientId: string } {
  const [millis, clientId] = decodePageCursor(cursor, 2) as [string, string];
  if (!/^[0-9]{1,15}$/.test(millis)) throw invalidCursor();
  return { createdAt: new Date(Number(millis)), clientId };
}
