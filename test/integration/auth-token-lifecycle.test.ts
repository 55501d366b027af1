import { decodeJwt } from 'jose';
import { composeApi } from '../../api/composition-root.js';
import { requireBearer } from '../../api/middleware/bearer-auth.middleware.js';
import { createServiceContext } from '../../api/service-context.factory.js';
import type { ServiceContext } from '../../api/service-context.js';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startMiddlewareApp } from '../support/middleware-app.js';
import { authorizeUrl, exchangeCode, postToAuthServer, type TestApp } from '../support/oauth-flow-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * Enterprise (client_credentials) tokens are JWTs checked without the store: introspection
 * describes them, their client revokes them, and every API process then refuses them, within
 * TOKEN_REVOCATION_CHECK_SECONDS (2 here) for processes other than the one that revoked.
 */
describe('authorization server: introspection and revocation of enterprise tokens, public-client revocation', () => {
  let service: TestService;
  let otherProcess: ServiceContext & { close: () => Promise<void> };
  let here: { url: string; close: () => Promise<void> };
  let there: { url: string; close: () => Promise<void> };
  let worker: RunningWorker;

  beforeAll(async () => {
    service = await startTestService('auth-lifecycle', { TOKEN_REVOCATION_CHECK_SECONDS: '2' }, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    // The bearer check of this process, and of another API process: its own connection, so its
    // own caches, on the same database.
    here = await startMiddlewareApp(service.ctx, [requireBearer(service.ctx, service.services.bearer, 'otp')]);
    otherProcess = await createServiceContext(service.config, memoryLogger().logger);
    there = await startMiddlewareApp(otherProcess, [requireBearer(otherProcess, composeApi(otherProcess).bearer, 'otp')]);
  });
  afterAll(async () => {
    await here.close();
    await there.close();
    await otherProcess.close();
    await worker.shutdown();
    await service.close();
  });

  const probe = (api: { url: string }, token: string) => fetch(`${api.url}/probe`, { headers: { authorization: `Bearer ${token}` } });
  const introspect = async (app: Pick<TestApp, 'clientId' | 'clientSecret'>, token: string) => {
    const res = await postToAuthServer(service, '/oauth/introspect', app, { token });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  test('when its client introspects an enterprise token, then it is active with client_id, scope, exp; another client and a bad token see active false', async () => {
    const owner = await createClientWithToken(service, { scopes: ['otp', 'users'] });
    const other = await createClientWithToken(service, { scopes: ['otp'] });
    const now = Math.floor(Date.now() / 1000);
    const body = await introspect(owner, owner.accessToken);
    expect(body).toEqual({
      active: true,
      client_id: owner.clientId,
      scope: 'otp users',
      exp: expect.any(Number),
      iat: expect.any(Number),
      iss: `${service.config.publicUrl}/svc/authserver`,
      aud: `${service.config.publicUrl}/v1`,
      sub: owner.clientId,
      jti: expect.any(String),
      token_type: 'Bearer',
    });
    expect(body.exp).toBeGreaterThan(now + service.config.accessTokenTtlSeconds - 30);
    expect(await introspect(other, owner.accessToken)).toEqual({ active: false });
    const [header, payload] = owner.accessToken.split('.');
    expect(await introspect(owner, `${header}.${payload}.AAAA`)).toEqual({ active: false });
  });

  test('when a scope is removed from a client, then introspection of its earlier token no longer names it', async () => {
    const owner = await createClientWithToken(service, { scopes: ['otp', 'users'] });
    const patched = await fetch(`${service.url}/admin/clients/${owner.clientId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['otp'] }),
    });
    expect(patched.status).toBe(200);
    expect(await introspect(owner, owner.accessToken)).toMatchObject({ active: true, scope: 'otp' });
  });

  test('when its client revokes an enterprise token, then introspection says inactive and every API process answers 401 until it would have expired', async () => {
    const owner = await createClientWithToken(service, { scopes: ['otp'] });
    expect((await probe(here, owner.accessToken)).status).toBe(200);
    expect((await probe(there, owner.accessToken)).status).toBe(200);

    const revoked = await postToAuthServer(service, '/oauth/revoke', owner, { token: owner.accessToken, token_type_hint: 'access_token' });
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toBe('');
    expect(await introspect(owner, owner.accessToken)).toEqual({ active: false });
    // The process that revoked it refuses it at once.
    const refused = await probe(here, owner.accessToken);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'invalid_token', error_description: `Invalid access token: ${owner.accessToken}` });
    // Another process, which saw the token as good just before, refuses it within its check window.
    const started = Date.now();
    await eventually(async () => ((await probe(there, owner.accessToken)).status === 401 ? true : undefined), 10000, 100);
    expect(Date.now() - started).toBeLessThan(2000 + 1500);

    // Kept until the token would have expired, then dropped by MongoDB's TTL index.
    const rows = await service.ctx.mongo.db!.collection('revoked_tokens').find({ clientId: owner.clientId }).toArray();
    expect(rows).toHaveLength(1);
    expect((rows[0]?.expiresAt as Date).getTime() / 1000).toBe(decodeJwt(owner.accessToken).exp);

    // Revoking again is fine.
    expect((await postToAuthServer(service, '/oauth/revoke', owner, { token: owner.accessToken })).status).toBe(200);
  });

  test("when a client revokes another client's enterprise token, then 400 invalid_request and the token still works", async () => {
    const owner = await createClientWithToken(service, { scopes: ['otp'] });
    const other = await createClientWithToken(service, { scopes: ['otp'] });
    const res = await postToAuthServer(service, '/oauth/revoke', other, { token: owner.accessToken });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client is not authorized to revoke the presented token',
    });
    expect((await probe(here, owner.accessToken)).status).toBe(200);
    const wrongSecret = await postToAuthServer(
      service,
      '/oauth/revoke',
      { clientId: owner.clientId, clientSecret: 'wrong' },
      { token: owner.accessToken },
    );
    expect(wrongSecret.status).toBe(401);
    expect(((await wrongSecret.json()) as { error: string }).error).toBe('invalid_client');
  });

  test('when a public app revokes its own refresh token with client_id alone, then the refresh token and its grant end; another app cannot revoke it', async () => {
    const redirectUri = 'http://127.0.0.1:9/public/callback';
    const { client } = await registerClient(service.services.clients, {
      name: 'Phone app',
      scopes: [],
      redirectUris: [redirectUri],
      public: true,
    });
    const stranger = await registerClient(service.services.clients, {
      name: 'Other phone app',
      scopes: [],
      redirectUris: [redirectUri],
      public: true,
    });
    const app: TestApp = { clientId: client.clientId, redirectUri };
    await insertUser(service.ctx.mongo, { userId: 'pub-user', mobileNumber: '+15550500001' });
    const verifier = 'v'.repeat(50);
    const { createHash } = await import('node:crypto');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const callback = await signInWithForms(
      service,
      new FormWalker(service.url),
      authorizeUrl(service, app, {
        scope: 'openid offline_access notifications',
        prompt: 'consent',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      'pub-user',
      '+15550500001',
    );
    const code = new URL(callback).searchParams.get('code') as string;
    const tokenRes = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string };
    expect(typeof tokens.refresh_token).toBe('string');

    const strangerRes = await postToAuthServer(
      service,
      '/oauth/revoke',
      { clientId: stranger.client.clientId },
      { token: tokens.refresh_token },
    );
    expect(strangerRes.status).toBe(400);
    expect(await strangerRes.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client is not authorized to revoke the presented token',
    });

    const res = await postToAuthServer(service, '/oauth/revoke', app, { token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    const refresh = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    // The grant went with it: the access token from the same sign-in is refused too.
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  test('when a confidential app revokes a user access token, then introspection says inactive', async () => {
    const redirectUri = 'http://127.0.0.1:9/conf/callback';
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Web app',
      scopes: [],
      redirectUris: [redirectUri],
    });
    const app: TestApp = { clientId: client.clientId, clientSecret: clientSecret as string, redirectUri };
    await insertUser(service.ctx.mongo, { userId: 'conf-user', mobileNumber: '+15550500002' });
    const callback = await signInWithForms(service, new FormWalker(service.url), authorizeUrl(service, app), 'conf-user', '+15550500002');
    const tokens = await exchangeCode(service, app, callback);
    expect((await postToAuthServer(service, '/oauth/revoke', app, { token: tokens.access_token as string })).status).toBe(200);
    expect(await introspect(app, tokens.access_token as string)).toEqual({ active: false });
  });
});
