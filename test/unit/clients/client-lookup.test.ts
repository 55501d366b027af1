import { CLIENT_SECRET_RECHECK_MS, createClientLookup } from '../../../core/clients/client-lookup.cache.js';
import type { ClientWithSecret } from '../../../core/clients/clients.repository.js';
import { makeClientWithSecret } from '../../support/client-fixtures.js';

/** A store holding one client whose secret hash the test changes, counting the reads. */
function countingStore() {
  const state = { secretHash: 'first', reads: 0 };
  const read = async (clientId: string): Promise<ClientWithSecret | null> => {
    state.reads += 1;
    if (clientId !== 'acme') return null;
    return makeClientWithSecret({ clientId, enterpriseId: 'default', name: 'acme', scopes: [], secretHash: state.secretHash });
  };
  const store = {
    findClientWithSecret: read,
    findClient: read,
    listPublicClientLocations: async () => [],
  };
  return { state, store };
}

describe('client lookup: looking past the cache for a rotated secret', () => {
  test('when it is asked again and again within the window, then the store is read once; after the window, afresh', async () => {
    const { state, store } = countingStore();
    const lookup = createClientLookup(store);
    expect((await lookup.recheckedClientWithSecret('acme', 0))?.secretHash).toBe('first');
    state.secretHash = 'rotated elsewhere';
    for (let i = 0; i < 50; i += 1) await lookup.recheckedClientWithSecret('acme', CLIENT_SECRET_RECHECK_MS - 1);
    expect(state.reads).toBe(1);
    expect((await lookup.recheckedClientWithSecret('acme', CLIENT_SECRET_RECHECK_MS))?.secretHash).toBe('rotated elsewhere');
    expect(state.reads).toBe(2);
  });

  test('when the client is invalidated (a rotation in this process), then the next look reads the store at once', async () => {
    const { state, store } = countingStore();
    const lookup = createClientLookup(store);
    await lookup.recheckedClientWithSecret('acme', 0);
    state.secretHash = 'rotated here';
    lookup.invalidate('acme');
    expect((await lookup.recheckedClientWithSecret('acme', 1))?.secretHash).toBe('rotated here');
  });
});
