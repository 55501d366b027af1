import { decodeJwt, decodeProtectedHeader } from 'jose';
import { registerClient } from '../../core/clients/clients.service.js';
import { createClientWithToken, requestToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('authorization server: client_credentials token endpoint', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('auth-token');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a client asks for one of its scopes, then it gets a JWT access token for that scope', async () => {
    const { client, clientSecret } = await registerClient(service.ctx.mongo, { name: 'acme', scopes: ['otp', 'users'] });
    const res = await requestToken(service, { clientId: client.clientId, clientSecret: clientSecret! }, { grant_type: 'client_credentials', scope: 'otp' });
    const body = (await res.json()) as Record<string, unknown>;
    console.log(res.status, body);
    expect(res.status).toBe(200);
    const claims = decodeJwt(body.access_token as string);
    console.log(claims, decodeProtectedHeader(body.access_token as string));
  });

  test('helper', async () => {
    const r = await createClientWithToken(service, { scopes: ['otp', 'users'] });
    console.log(decodeJwt(r.accessToken));
  });
});
