import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { registerClient } from '../../core/clients/clients.service.js';
import type { ClientScope } from '../../core/clients/clients.repository.js';
import { requestToken } from '../support/auth-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('authorization server: discovery, JWKS and the client_credentials grant', () => {
  let service: TestService;
  let issuer: string;
  let audience: string;
  beforeAll(async () => {
    service = await startTestService('auth-token');
    issuer = `${service.config.publicUrl}/svc/authserver`;
    audience = `${service.config.publicUrl}/v1`;
  });
  afterAll(async () => {
    await service.close();
  });

  async function newClient(scopes: ClientScope[]) {
    const { client, clientSecret } = await registerClient(service.services.clients, { name: 'acme', scopes });
    return { clientId: client.clientId, clientSecret: clientSecret as string };
  }

  async function jwks(): Promise<JSONWebKeySet> {
    return (await (await fetch(`${service.url}/svc/authserver/jwks`)).json()) as JSONWebKeySet;
  }

  test('when discovery is read, then it names the issuer, the endpoints under /svc/authserver, the grant and the scopes', async () => {
    const res = await fetch(`${service.url}/svc/authserver/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      issuer,
      authorization_endpoint: expect.stringMatching(/\/svc\/authserver\/oauth\/authorize$/),
      token_endpoint: expect.stringMatching(/\/svc\/authserver\/oauth\/token$/),
      jwks_uri: expect.stringMatching(/\/svc\/authserver\/jwks$/),
      grant_types_supported: expect.arrayContaining(['client_credentials', 'authorization_code']),
      scopes_supported: expect.arrayContaining(['otp', 'users', 'notifications']),
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      response_types_supported: ['code'],
    });
  });

  test('when discovery is read, then it advertises exactly the endpoints, grants and modes that are built and tested', async () => {
    const body = (await (await fetch(`${service.url}/svc/authserver/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      'authorization_endpoint',
      'authorization_response_iss_parameter_supported',
      'claim_types_supported',
      'claims_parameter_supported',
      'claims_supported',
      'code_challenge_methods_supported',
      'end_session_endpoint',
      'grant_types_supported',
      'id_token_signing_alg_values_supported',
      'introspection_endpoint',
      'issuer',
      'jwks_uri',
      'request_uri_parameter_supported',
      'response_modes_supported',
      'response_types_supported',
      'revocation_endpoint',
      'scopes_supported',
      'subject_types_supported',
      'token_endpoint',
      'token_endpoint_auth_methods_supported',
      'ui_locales_supported',
      'userinfo_endpoint',
    ]);
    expect(body).toMatchObject({
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      ui_locales_supported: ['en', 'de', 'es', 'fr', 'pt'],
      response_modes_supported: ['form_post', 'fragment', 'query'],
      claims_parameter_supported: false,
      request_uri_parameter_supported: false,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      end_session_endpoint: `${issuer}/session/end`,
      userinfo_endpoint: `${issuer}/userinfo`,
      claims_supported: ['sub', 'enterprise_id', 'sid', 'auth_time', 'iss'],
    });
  });

  test('when a caller forges Host or X-Forwarded-Host, then discovery still publishes PUBLIC_URL endpoints', async () => {
    const res = await fetch(`${service.url}/svc/authserver/.well-known/openid-configuration`, {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    });
    const body = (await res.json()) as Record<string, string>;
    const publicBase = new URL(service.config.publicUrl);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri']) {
      expect(new URL(body[endpoint] as string).host).toBe(publicBase.host);
      expect(new URL(body[endpoint] as string).protocol).toBe(publicBase.protocol);
    }
  });

  test('when RFC 8414 metadata is read at either well-known location, then it is the discovery document', async () => {
    const discovery = await (await fetch(`${service.url}/svc/authserver/.well-known/openid-configuration`)).json();
    for (const path of [
      '/.well-known/oauth-authorization-server/svc/authserver',
      '/svc/authserver/.well-known/oauth-authorization-server',
    ]) {
      const res = await fetch(`${service.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(discovery);
    }
  });

  test('when JWKS is read, then it holds the public P-256 key of access tokens and the RSA key of ID tokens', async () => {
    const res = await fetch(`${service.url}/svc/authserver/jwks`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as JSONWebKeySet;
    expect(body.keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), alg: 'ES256', use: 'sig' },
      { kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: expect.any(String), alg: 'RS256', use: 'sig' },
    ]);
  });

  test('when a client asks for one of its scopes, then it gets a JWT with iss, aud, scope, exp and a kid from JWKS', async () => {
    const creds = await newClient(['otp', 'users']);
    const res = await requestToken(service, creds, { grant_type: 'client_credentials', scope: 'otp' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ access_token: expect.any(String), expires_in: 3600, scope: 'otp', token_type: 'Bearer' });

    const token = body.access_token as string;
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(await jwks()), { issuer, audience });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: (await jwks()).keys[0].kid });
    expect(payload).toEqual({
      jti: expect.any(String),
      sub: creds.clientId,
      client_id: creds.clientId,
      iat: expect.any(Number),
      exp: (payload.iat as number) + 3600,
      scope: 'otp',
      iss: issuer,
      aud: audience,
    });
  });

  test('when a client asks for no scope, then the token carries every scope registered for it', async () => {
    const creds = await newClient(['otp', 'users', 'notifications']);
    const res = await requestToken(service, creds);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expect(body).toEqual({ access_token: expect.any(String), expires_in: 3600, scope: 'otp users notifications', token_type: 'Bearer' });
    expect(decodeJwt(body.access_token as string).scope).toBe('otp users notifications');
  });

  test('when a client asks for a known scope it was not given, then invalid_scope', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds, { grant_type: 'client_credentials', scope: 'otp users' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'users' });
  });

  test('when a client asks for a scope that does not exist, then invalid_scope', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds, { grant_type: 'client_credentials', scope: 'admin' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'admin' });
  });

  test('when a client asks client_credentials for openid, then invalid_scope (openid is for user logins)', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds, { grant_type: 'client_credentials', scope: 'openid' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'openid' });
  });

  test('when a client with no scopes asks for none, then it gets a token without scope', async () => {
    const creds = await newClient([]);
    const res = await requestToken(service, creds);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ access_token: expect.any(String), expires_in: 3600, token_type: 'Bearer' });
  });

  test('when the secret is wrong, then 401 invalid_client', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, { clientId: creds.clientId, clientSecret: `${creds.clientSecret}x` });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('when the client is unknown, then 401 invalid_client', async () => {
    const res = await requestToken(service, { clientId: 'no-such-client', clientSecret: 'whatever' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('when no client authentication is sent, then 401 invalid_client with a Basic challenge (RFC 6749 5.2)', async () => {
    for (const path of ['/oauth/token', '/oauth/introspect', '/oauth/revoke']) {
      const res = await fetch(`${service.url}/svc/authserver${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', token: 'x' }).toString(),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Basic realm="${service.config.publicUrl}/svc/authserver"`);
      expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    }
  });

  test('when the stored hash itself is sent as the secret, then 401 invalid_client', async () => {
    const creds = await newClient(['otp']);
    const stored = (await service.ctx.mongo.collection('clients').findOne({ clientId: creds.clientId })) as { secretHash: string } | null;
    const res = await requestToken(service, { clientId: creds.clientId, clientSecret: stored!.secretHash });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('when the grant type is not supported, then unsupported_grant_type', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds, { grant_type: 'password', username: 'a', password: 'b' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'unsupported_grant_type', error_description: 'unsupported grant_type requested' });
  });

  test('when a resource other than our API is asked for, then invalid_target', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds, { grant_type: 'client_credentials', resource: 'https://elsewhere.example/' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' });
  });

  test('when tokens are issued, then neither the secret nor the token appears in the logs', async () => {
    const creds = await newClient(['otp']);
    const res = await requestToken(service, creds);
    const { access_token: token } = (await res.json()) as { access_token: string };
    const logged = JSON.stringify(service.logLines());
    expect(logged).not.toContain(creds.clientSecret);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(Buffer.from(`${creds.clientId}:${creds.clientSecret}`).toString('base64'));
  });

  test('when the OpenAPI document is read, then it lists the authorization server and admin routes', async () => {
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /svc/authserver/.well-known/openid-configuration',
        'GET /svc/authserver/jwks',
        'POST /svc/authserver/oauth/token',
        'GET /svc/authserver/oauth/authorize',
        'POST /admin/clients',
        'GET /admin/clients',
        'GET /admin/clients/{clientId}',
        'DELETE /admin/clients/{clientId}',
        'POST /admin/groups',
        'GET /admin/groups',
      ]),
    );
  });

  test('when the authorization endpoint gets an unknown client_id, then a 400 HTML page and no redirect', async () => {
    const res = await fetch(
      `${service.url}/svc/authserver/oauth/authorize?client_id=nobody&response_type=code&scope=openid&redirect_uri=https://evil.example/cb`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('invalid_client');
  });
});
