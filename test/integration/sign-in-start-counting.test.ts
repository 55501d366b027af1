import { generateKeyPairSync } from 'node:crypto';
import Provider, { type Adapter } from 'oidc-provider';
import { createAuthServer } from '../../api/auth-server/auth-server.js';
import { startTestService, type TestService } from '../support/test-service.js';

type InteractionClass = { prototype: { save: (ttl: number) => Promise<string> } };
const saveOf = (provider: Provider) => (provider.Interaction as unknown as InteractionClass).prototype.save;

// Sign-ins started are counted by the provider's storage (sign-in-start-limit.ts), not by
// replacing the provider's own classes: the provider's Interaction model stays as the library
// ships it, so its upgrades change nothing in how sign-ins are counted.
describe('authorization server: counting sign-ins started', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService('sign-in-start-counting');
  });
  afterAll(async () => {
    await service.close();
  });

  test("when the authorization server is built, then its Interaction model saves with the library's own code", async () => {
    const provider = await createAuthServer(service.ctx, service.services.authServer, (req) => req.socket.remoteAddress ?? '');
    const untouched = new Provider('https://issuer.example', {
      // What the library needs to start without its development-only warnings; never used.
      adapter: class NoStorage {} as unknown as new (name: string) => Adapter,
      jwks: { keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'k' }] },
      features: { devInteractions: { enabled: false } },
    });
    expect(saveOf(provider).toString()).toBe(saveOf(untouched).toString());
  });
});
