import { mintUserToken, registerAppClient } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody } from '../support/users-helpers.js';

/**
 * Every refusal under /v1/me carries the client library's `code` (4, 39 or 141), whichever step
 * of the service raised it: a route, the 405 answer, the CORS check, or no route at all. The body
 * is otherwise the one the service renders for that refusal.
 */
describe('refusals of the user API (/v1/me*)', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('user-api-refusals');
    const appClientId = await registerAppClient(service);
    await insertUser(service.ctx.mongo, { userId: 'rita', mobileNumber: '+15550600001' });
    // Signed in just now: removing a passkey asks for a recent sign-in before it looks the passkey up.
    token = await mintUserToken(service, { userId: 'rita', clientId: appClientId, signedInAt: Math.floor(Date.now() / 1000) });
  });
  afterAll(async () => {
    await service.close();
  });

  const call = (method: string, path: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
    fetch(`${service.url}${path}`, { method, headers });

  test('when a /v1/me path gets a method it does not take (DELETE /v1/me/notifications), then 405 with Allow and code 4', async () => {
    const res = await call('DELETE', '/v1/me/notifications');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toEqual(
      errorBody(405, 'Method Not Allowed', "Request method 'DELETE' is not supported", '/v1/me/notifications', { code: 4 }),
    );
  });

  test('when a path under /v1/me does not exist (GET /v1/me/notificationz), then 404 with code 4', async () => {
    const res = await call('GET', '/v1/me/notificationz');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(
      errorBody(404, 'Not Found', 'No route for GET /v1/me/notificationz', '/v1/me/notificationz', { code: 4 }),
    );
  });

  const unauthorized = { error: 'unauthorized', error_description: 'Full authentication is required to access this resource', code: 39 };
  const unlistedOrigin = { origin: 'https://evil.example', 'access-control-request-method': 'GET' };

  test.each([
    ['the profile is read without a token', 401, 'GET', '/v1/me', {}, unauthorized],
    ['the passkeys are listed without a token', 401, 'GET', '/v1/me/passkeys', {}, unauthorized],
    [
      'the user removes a passkey they do not have',
      404,
      'DELETE',
      '/v1/me/passkeys/no-such-passkey',
      undefined,
      errorBody(404, 'Not Found', 'Passkey not found', '/v1/me/passkeys/no-such-passkey', { code: 4 }),
    ],
    [
      'a page of an origin no client lists preflights',
      403,
      'OPTIONS',
      '/v1/me',
      unlistedOrigin,
      errorBody(403, 'Forbidden', 'Origin https://evil.example may not call /v1/me from a browser', '/v1/me', { code: 39 }),
    ],
  ])('when %s, then %i in its usual body with the client library code', async (_label, status, method, path, headers, body) => {
    const res = await call(method, path, headers);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual(body);
  });
});
