import type { Connection } from 'mongoose';
import { findClient, type Client } from './clients.repository.js';

/**
 * How long a client read from MongoDB is reused by the per-request checks (bearer token and IP
 * allow-list). A deletion or change made through another process takes effect within this
 * window; the process that deletes invalidates its own cache at once.
 */
export const CLIENT_CACHE_TTL_MS = 10_000;

interface Entry {
  client: Client | null;
  until: number;
}

const caches = new WeakMap<Connection, Map<string, Entry>>();

function cacheOf(connection: Connection): Map<string, Entry> {
  let cache = caches.get(connection);
  if (!cache) {
    cache = new Map();
    caches.set(connection, cache);
  }
  return cache;
}

/** The client (or null when it does not exist), at most CLIENT_CACHE_TTL_MS old. */
export async function lookupClient(connection: Connection, clientId: string): Promise<Client | null> {
  const cache = cacheOf(connection);
  const now = Date.now();
  const hit = cache.get(clientId);
  if (hit && hit.until > now) return hit.client;
  const client = await findClient(connection, clientId);
  // Bounded: entries of clients that stopped calling are dropped when the map grows large.
  if (cache.size > 10_000) cache.clear();
  cache.set(clientId, { client, until: now + CLIENT_CACHE_TTL_MS });
  return client;
}

export function invalidateClient(connection: Connection, clientId: string): void {
  cacheOf(connection).delete(clientId);
}
