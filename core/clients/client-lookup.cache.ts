import { createTtlCache } from '../platform/ttl-cache.js';
import type { Client, ClientsRepository, ClientWithSecret } from './clients.repository.js';
import { webOriginsOf } from './web-origins.js';

/**
 * How long a client read from MongoDB is reused by the per-request checks (bearer token and IP
 * allow-list). A deletion or change made through another process takes effect within this
 * window; the process that deletes invalidates its own cache at once.
 */
export const CLIENT_CACHE_TTL_MS = 10_000;

/**
 * How often the token endpoint may look past the cache for one client, when a presented secret
 * matches none it holds: a rotation made by another process is seen within this window, and
 * wrong secrets sent with a known client id cost at most one store read per client per window.
 */
export const CLIENT_SECRET_RECHECK_MS = 5_000;

// Browser calls (CORS preflights included) carry no client id: the origin is checked against
// the web origins of every public client, read as one set.
const ALL = 'all';

/** This process's reads of clients, each at most CLIENT_CACHE_TTL_MS old; built once at its composition root. */
export interface ClientLookup {
  /** The client, or null when it does not exist. */
  client(clientId: string): Promise<Client | null>;
  /** The client with its secret hash, for the authorization server (it reads it on every token request). */
  clientWithSecret(clientId: string): Promise<ClientWithSecret | null>;
  /**
   * The client with its secret hash as stored, read past `clientWithSecret` (to see a rotation
   * made by another process), but at most once per CLIENT_SECRET_RECHECK_MS per client.
   */
  recheckedClientWithSecret(clientId: string, now?: number): Promise<ClientWithSecret | null>;
  /** True when `origin` is a web origin of some public client. */
  isWebOriginOfAnyClient(origin: string): Promise<boolean>;
  /** Forget what this process read about a client (after it was created, changed or deleted). */
  invalidate(clientId: string): void;
}

export function createClientLookup(
  clients: Pick<ClientsRepository, 'findClient' | 'findClientWithSecret' | 'listPublicClientLocations'>,
): ClientLookup {
  // Unknown client ids (anyone can send one to the token endpoint) are cached apart from real clients.
  const isMiss = (client: Client | null) => client === null;
  const plain = createTtlCache<Client | null>(CLIENT_CACHE_TTL_MS, (clientId) => clients.findClient(clientId), { isMiss });
  const withSecret = createTtlCache<ClientWithSecret | null>(CLIENT_CACHE_TTL_MS, (clientId) => clients.findClientWithSecret(clientId), {
    isMiss,
  });
  // Its own cache, filled only when a secret did not match: requests that authenticate keep
  // using `withSecret` and its longer window.
  const rechecked = createTtlCache<ClientWithSecret | null>(
    CLIENT_SECRET_RECHECK_MS,
    (clientId) => clients.findClientWithSecret(clientId),
    {
      isMiss,
    },
  );
  const webOrigins = createTtlCache<Set<string>>(
    CLIENT_CACHE_TTL_MS,
    async () => new Set((await clients.listPublicClientLocations()).flatMap(webOriginsOf)),
    { maxEntries: 1 },
  );
  return {
    client: (clientId) => plain.get(clientId),
    clientWithSecret: (clientId) => withSecret.get(clientId),
    recheckedClientWithSecret: (clientId, now) => rechecked.get(clientId, now),
    isWebOriginOfAnyClient: async (origin) => (await webOrigins.get(ALL)).has(origin),
    invalidate(clientId) {
      plain.forget(clientId);
      withSecret.forget(clientId);
      rechecked.forget(clientId);
      // A new or changed public client may bring new web origins.
      webOrigins.forget(ALL);
    },
  };
}
