import type { Connection } from 'mongoose';
import { createConnectionTtlCache } from '../platform/db/connection-ttl-cache.js';
import { createClientsRepository, type Client, type ClientWithSecret } from './clients.repository.js';
import { webOriginsOf } from './web-origins.js';

/**
 * How long a client read from MongoDB is reused by the per-request checks (bearer token and IP
 * allow-list). A deletion or change made through another process takes effect within this
 * window; the process that deletes invalidates its own cache at once.
 */
export const CLIENT_CACHE_TTL_MS = 10_000;

const cache = createConnectionTtlCache<Client | null>(CLIENT_CACHE_TTL_MS, (connection, clientId) =>
  createClientsRepository(connection).findClient(clientId),
);
// The authorization server reads the client (with its secret hash) on every token request.
const withSecretCache = createConnectionTtlCache<ClientWithSecret | null>(CLIENT_CACHE_TTL_MS, (connection, clientId) =>
  createClientsRepository(connection).findClientWithSecret(clientId),
);

/** The client (or null when it does not exist), at most CLIENT_CACHE_TTL_MS old. */
export function lookupClient(connection: Connection, clientId: string): Promise<Client | null> {
  return cache.get(connection, clientId);
}

/** The client with its secret hash, for the authorization server; same window as lookupClient. */
export function lookupClientWithSecret(connection: Connection, clientId: string): Promise<ClientWithSecret | null> {
  return withSecretCache.get(connection, clientId);
}

// Browser calls (CORS preflights included) carry no client id: the origin is checked against
// the web origins of every public client, read as one set.
const ALL = 'all';
const webOriginsCache = createConnectionTtlCache<Set<string>>(
  CLIENT_CACHE_TTL_MS,
  async (connection) => new Set((await createClientsRepository(connection).listPublicClientLocations()).flatMap(webOriginsOf)),
  1,
);

/** True when `origin` is a web origin of some public client; same window as lookupClient. */
export async function isWebOriginOfAnyClient(connection: Connection, origin: string): Promise<boolean> {
  return (await webOriginsCache.get(connection, ALL)).has(origin);
}

/** Forget what this process read about a client (after it was created, changed or deleted). */
export function invalidateClient(connection: Connection, clientId: string): void {
  cache.forget(connection, clientId);
  withSecretCache.forget(connection, clientId);
  webOriginsCache.forget(connection, ALL);
}
