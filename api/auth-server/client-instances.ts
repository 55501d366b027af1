import type Provider from 'oidc-provider';
import type { Adapter } from 'oidc-provider';

/**
 * oidc-provider finds a client by reading its metadata, then hashing the metadata's JSON (SHA-256)
 * to find the Client object it built for it: about 2 % of a client-credentials grant's CPU. Our
 * adapter hands out one frozen metadata object per cached client read (oidc-adapter.ts), so the
 * Client built for that object is reused while the object lives. A client changed, deleted or
 * read again after the cache's lifetime comes back as another object (or none) and goes through
 * the provider's own find. Replaced on this provider instance's Client class only.
 */
export function reuseClientInstances(provider: Provider, clients: Pick<Adapter, 'find'>): void {
  const ClientClass = provider.Client as unknown as { find: (id: unknown) => Promise<object | undefined> };
  const providerFind = ClientClass.find.bind(ClientClass);
  const built = new WeakMap<object, object>();
  ClientClass.find = async (id) => {
    const metadata = typeof id === 'string' && id !== '' ? await clients.find(id) : undefined;
    const known = metadata && built.get(metadata);
    if (known) return known;
    const client = await providerFind(id);
    if (metadata && client) built.set(metadata, client);
    return client;
  };
}
