import * as oidc from 'openid-client';
import { registerClient } from '../../core/clients/clients.service.js';
import { startTestService, type TestService } from '../support/test-service.js';

/**
 * The authorization server through openid-client, the certified relying-party library, set up
 * as an ordinary app would be (only plain http allowed, since the test service is on loopback).
 */
describe('authorization server through a standard OAuth client library (openid-client)', () => {
  let service: TestService;
  let issuer: URL;
  beforeAll(async () => {
    service = await startTestService('auth-openid', {}, { ownPublicUrl: true });
    issuer = new URL(`${service.config.publicUrl}/svc/authserver`);
  });
  afterAll(async () => {
    await service.close();
  });

  async function discover(clientId: string, clientSecret?: string, auth?: oidc.ClientAuth): Promise<oidc.Configuration> {
    return oidc.discovery(issuer, clientId, clientSecret, auth, { execute: [oidc.allowInsecureRequests] });
  }

  test('when a confidential client uses the library default (client_secret_post), then client_credentials gives a token with its scopes', async () => {
    const { client, clientSecret } = await registerClient(service.ctx.mongo, { name: 'library app', scopes: ['otp', 'users'] });
    const config = await discover(client.clientId, clientSecret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'otp' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('otp');
    expect(typeof tokens.access_token).toBe('string');
    const everything = await oidc.clientCredentialsGrant(config);
    expect(everything.scope).toBe('otp users');
  });

  test('when the same client uses HTTP Basic, then client_credentials works too', async () => {
    const { client, clientSecret } = await registerClient(service.ctx.mongo, { name: 'basic app', scopes: ['otp'] });
    const config = await discover(client.clientId, clientSecret, oidc.ClientSecretBasic(clientSecret as string));
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.scope).toBe('otp');
  });

  test('when the secret sent in the body is wrong, then the library reports invalid_client', async () => {
    const { client } = await registerClient(service.ctx.mongo, { name: 'wrong secret app', scopes: ['otp'] });
    const config = await discover(client.clientId, 'not-the-secret');
    await expect(oidc.clientCredentialsGrant(config)).rejects.toMatchObject({ error: 'invalid_client' });
  });
});
