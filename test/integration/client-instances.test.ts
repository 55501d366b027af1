import type Provider from 'oidc-provider';
import { createAuthServer } from '../../api/auth-server/auth-server.js';
import { registerClient, removeClient, updateClient } from '../../core/clients/clients.service.js';
import { startTestService, type TestService } from '../support/test-service.js';

// The provider's Client objects are reused while the client's cached read lives, and never past a change.
describe('authorization server: client objects', () => {
  let service: TestService;
  let provider: Provider;
  type FoundClient = { clientId: string; scope?: string } | undefined;
  const find = (id: unknown) => (provider.Client as unknown as { find: (id: unknown) => Promise<FoundClient> }).find(id);

  beforeAll(async () => {
    service = await startTestService('client-instances');
    provider = await createAuthServer(service.ctx, service.services.authServer, (req) => req.socket.remoteAddress ?? '');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a client is found twice while its read is cached, then the same Client object answers', async () => {
    const { client } = await registerClient(service.services.clients, { name: 'same', scopes: ['otp'] });
    const first = await find(client.clientId);
    expect(first?.clientId).toBe(client.clientId);
    expect(await find(client.clientId)).toBe(first);
  });

  test('when a client changes, then the next find builds it from the new metadata', async () => {
    const { client } = await registerClient(service.services.clients, { name: 'changing', scopes: ['otp'] });
    const before = await find(client.clientId);
    expect(before?.scope?.split(' ')).not.toContain('users');
    await updateClient(service.services.clients, client.clientId, { scopes: ['otp', 'users'] });
    const after = await find(client.clientId);
    expect(after).not.toBe(before);
    expect(after?.scope?.split(' ')).toEqual(expect.arrayContaining(['otp', 'users']));
  });

  test('when a client is deleted, or the id is unknown or empty, then none is found', async () => {
    const { client } = await registerClient(service.services.clients, { name: 'leaving', scopes: ['otp'] });
    expect(await find(client.clientId)).toBeDefined();
    await removeClient(service.services.clients, client.clientId);
    expect(await find(client.clientId)).toBeUndefined();
    expect(await find('no-such-client')).toBeUndefined();
    expect(await find('')).toBeUndefined();
    expect(await find(42)).toBeUndefined();
  });
});
