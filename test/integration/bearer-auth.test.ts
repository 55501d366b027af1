import { randomUUID } from 'node:crypto';
import { generateKeyPair, importJWK, SignJWT } from 'jose';
import { requireBearer } from '../../api/middleware/bearer-auth.middleware.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startMiddlewareApp } from '../support/middleware-app.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('bearer middleware', () => {
  let service: TestService;
  let probe: { url: string; close: () => Promise<void> };
  let issuer: string;
  let audience: string;
  beforeAll(async () => {
    service = await startTestService('bearer');
    probe = await startMiddlewareApp(service.ctx, [requireBearer(service.ctx, service.services.bearer, 'otp')]);
    issuer = `${service.config.publicUrl}/svc/authserver`;
    audience = `${service.config.publicUrl}/v1`;
  });
  afterAll(async () => {
    await probe.close();
    await service.close();
  });

  /** The process's signing keys, as the authorization server signs with them (the bearer check holds only their public halves). */
  const signingKeys = () => service.services.authServer.signingKeys();
  const call = (authorization?: string) => fetch(`${probe.url}/probe`, { headers: authorization === undefined ? {} : { authorization } });
  const unauthorized = { error: 'unauthorized', error_description: 'Full authentication is required to access this resource' };
  const invalid = (token: string) => ({ error: 'invalid_token', error_description: `Invalid access token: ${token}` });

  /** A token shaped like ours, signed by the real key unless another one is given. */
  async function forge(
    claims: Record<string, unknown>,
    options: { expiresAt?: number; otherKey?: boolean; audience?: string } = {},
  ): Promise<string> {
    const signing = (await signingKeys()).tokens;
    const key = options.otherKey
      ? (await generateKeyPair(signing.alg, { extractable: true })).privateKey
      : await importJWK(signing.privateJwk, signing.alg);
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      client_id: 'c',
      scope: 'otp',
      jti: randomUUID(),
      ...claims,
      sub: (claims.sub ?? claims.client_id ?? 'c') as string,
    })
      .setProtectedHeader({ alg: signing.alg, typ: 'at+jwt', kid: signing.kid })
      .setIssuer(issuer)
      .setAudience(options.audience ?? audience)
      .setIssuedAt(now - 120)
      .setExpirationTime(options.expiresAt ?? now + 600)
      .sign(key);
  }

  test('when there is no Authorization header, then 401 unauthorized', async () => {
    const res = await call();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="unauthorized"');
    expect(await res.json()).toEqual(unauthorized);
  });

  test('when the header is not a Bearer header, then 401 unauthorized', async () => {
    for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Token abc', 'Bearer a b']) {
      const res = await call(header);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(unauthorized);
    }
  });

  test('when the token is not a JWT, then 401 invalid_token echoing it', async () => {
    const res = await call('Bearer not-a-token');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await res.json()).toEqual(invalid('not-a-token'));
  });

  test('when the token is signed by another key, then 401 invalid_token', async () => {
    const { clientId } = await createClientWithToken(service, { scopes: ['otp'] });
    const token = await forge({ client_id: clientId }, { otherKey: true });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when the token has expired, then 401 invalid_token', async () => {
    const { clientId } = await createClientWithToken(service, { scopes: ['otp'] });
    const token = await forge({ client_id: clientId }, { expiresAt: Math.floor(Date.now() / 1000) - 60 });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when the token names another audience, then 401 invalid_token', async () => {
    const { clientId } = await createClientWithToken(service, { scopes: ['otp'] });
    const token = await forge({ client_id: clientId }, { audience: 'https://elsewhere.example/' });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when a JWT signed by our key is not an access token (typ), then 401 invalid_token', async () => {
    const signing = (await signingKeys()).tokens;
    const token = await new SignJWT({ client_id: 'c', scope: 'otp' })
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid })
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('5m')
      .sign(await importJWK(signing.privateJwk, signing.alg));
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when a token of ours names a user rather than the client (not client_credentials), then 401 invalid_token', async () => {
    const { clientId } = await createClientWithToken(service, { scopes: ['otp'] });
    const token = await forge({ client_id: clientId, sub: 'end-user-42' });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when a token of ours has no jti (so it could not be revoked), then 401 invalid_token', async () => {
    const { clientId } = await createClientWithToken(service, { scopes: ['otp'] });
    const token = await forge({ client_id: clientId, jti: undefined });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when the token lacks the route scope, then 403 insufficient_scope with a challenge naming the scope', async () => {
    const { accessToken } = await createClientWithToken(service, { scopes: ['users'] });
    const res = await call(`Bearer ${accessToken}`);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="otp"');
    expect(await res.json()).toEqual({ error: 'insufficient_scope', error_description: "The access token does not grant the scope 'otp'" });
  });

  test('when the token is good, then the handler runs with the client id and scopes', async () => {
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['otp', 'notifications'] });
    const res = await call(`Bearer ${accessToken}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      auth: { clientId, enterpriseId: 'default', scopes: ['otp', 'notifications'], test: false, testCodes: {} },
    });
  });

  test('when the scheme is written in lower case, then the token is still accepted', async () => {
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
    const res = await call(`bearer ${accessToken}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ auth: { clientId, enterpriseId: 'default', scopes: ['otp'], test: false, testCodes: {} } });
  });

  test('when the client is deleted through the admin API, then its existing tokens are refused', async () => {
    const { clientId, accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
    expect((await call(`Bearer ${accessToken}`)).status).toBe(200);
    const del = await fetch(`${service.url}/admin/clients/${clientId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(del.status).toBe(204);
    const res = await call(`Bearer ${accessToken}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(accessToken));
  });

  test('when a forged token would exist for an unknown client, then 401 invalid_token', async () => {
    const token = await forge({ client_id: 'never-registered' });
    const res = await call(`Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(invalid(token));
  });

  test('when the verification keys are read, then their public JWKs carry no private members', async () => {
    const { all } = await signingKeys();
    expect(all.map((key) => Object.keys(key.publicJwk).sort())).toEqual([
      ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'],
      ['alg', 'e', 'kid', 'kty', 'n', 'use'],
    ]);
  });
});
