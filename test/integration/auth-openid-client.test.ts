import * as oidc from 'openid-client';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * The authorization server through openid-client, the certified relying-party library, set up
 * as an ordinary app would be (only plain http allowed, since the test service is on loopback).
 */
describe('authorization server through a standard OAuth client library (openid-client)', () => {
  let service: TestService;
  let issuer: URL;
  let worker: RunningWorker;
  const redirectUri = 'http://127.0.0.1:9/callback';
  beforeAll(async () => {
    service = await startTestService('auth-openid', {}, { ownPublicUrl: true });
    issuer = new URL(`${service.config.publicUrl}/svc/authserver`);
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  async function discover(clientId: string, clientSecret?: string, auth?: oidc.ClientAuth): Promise<oidc.Configuration> {
    return oidc.discovery(issuer, clientId, clientSecret, auth, { execute: [oidc.allowInsecureRequests] });
  }

  test('when a confidential client uses the library default (client_secret_post), then client_credentials gives a token with its scopes', async () => {
    const { client, clientSecret } = await registerClient(service.services.clients, { name: 'library app', scopes: ['otp', 'users'] });
    const config = await discover(client.clientId, clientSecret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'otp' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('otp');
    expect(typeof tokens.access_token).toBe('string');
    const everything = await oidc.clientCredentialsGrant(config);
    expect(everything.scope).toBe('otp users');
  });

  test('when the same client uses HTTP Basic, then client_credentials works too', async () => {
    const { client, clientSecret } = await registerClient(service.services.clients, { name: 'basic app', scopes: ['otp'] });
    const config = await discover(client.clientId, clientSecret, oidc.ClientSecretBasic(clientSecret as string));
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.scope).toBe('otp');
  });

  test('when the secret sent in the body is wrong, then the library reports invalid_client', async () => {
    const { client } = await registerClient(service.services.clients, { name: 'wrong secret app', scopes: ['otp'] });
    const config = await discover(client.clientId, 'not-the-secret');
    await expect(oidc.clientCredentialsGrant(config)).rejects.toMatchObject({ error: 'invalid_client' });
  });

  async function signIn(config: oidc.Configuration, userId: string, address: string, scope = 'openid offline_access notifications') {
    // OpenID Connect grants offline_access only with prompt=consent; first-party apps still see no consent page.
    const prompt: Record<string, string> = scope.includes('offline_access') ? { prompt: 'consent' } : {};
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      ...prompt,
    });
    const callback = await signInWithForms(service, new FormWalker(service.url), url.toString(), userId, address);
    return { callback: new URL(callback), codeVerifier, state };
  }

  test('when a confidential app signs a user in with code + PKCE, then it gets access, refresh and ID tokens for that user', async () => {
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Acme Bank',
      scopes: ['otp'],
      redirectUris: [redirectUri],
    });
    await insertUser(service.ctx.mongo, { userId: 'oc-alice', mobileNumber: '+15550100001' });
    const config = await discover(client.clientId, clientSecret);
    const { callback, codeVerifier, state } = await signIn(config, 'oc-alice', '+15550100001');
    expect(callback.searchParams.get('iss')).toBe(issuer.toString());
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope?.split(' ').sort()).toEqual(['notifications', 'offline_access', 'openid']);
    expect(tokens.claims()).toMatchObject({ sub: 'oc-alice', enterprise_id: 'default' });
    expect(typeof tokens.refresh_token).toBe('string');

    const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ userId: 'oc-alice', status: 'ACTIVE' });

    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({
      active: true,
      sub: 'oc-alice',
      enterprise_id: 'default',
      client_id: client.clientId,
      token_type: 'Bearer',
    });

    // Rotation: the refresh token is replaced on use; reusing the old one revokes the chain.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    const after = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(after.status).toBe(401);
  });

  test('when an app revokes a user token, then introspection says inactive and /v1/me refuses it', async () => {
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Revoker',
      scopes: [],
      redirectUris: [redirectUri],
    });
    await insertUser(service.ctx.mongo, { userId: 'oc-bob', emailId: 'oc-bob@example.com' });
    const config = await discover(client.clientId, clientSecret);
    const { callback, codeVerifier, state } = await signIn(config, 'oc-bob', 'oc-bob@example.com', 'notifications');
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    expect(tokens.scope).toBe('notifications');
    expect(tokens.refresh_token).toBeUndefined();
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  test('when a public app signs in, then PKCE is required and the code exchange needs no secret', async () => {
    const { client } = await registerClient(service.services.clients, {
      name: 'Phone app',
      scopes: [],
      redirectUris: [redirectUri],
      public: true,
    });
    await insertUser(service.ctx.mongo, { userId: 'oc-carol', mobileNumber: '+15550100003' });
    const config = await discover(client.clientId, undefined, oidc.None());
    const { callback, codeVerifier, state } = await signIn(config, 'oc-carol', '+15550100003', 'openid notifications');
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe('oc-carol');
    // Introspection is for confidential clients; a public app revokes its own tokens with client_id alone.
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  test('when a public app signs out with a refresh token, then revoking it with client_id alone ends it', async () => {
    const { client } = await registerClient(service.services.clients, {
      name: 'Phone app 2',
      scopes: [],
      redirectUris: [redirectUri],
      public: true,
    });
    await insertUser(service.ctx.mongo, { userId: 'oc-pub', mobileNumber: '+15550100006' });
    const config = await discover(client.clientId, undefined, oidc.None());
    const { callback, codeVerifier, state } = await signIn(config, 'oc-pub', '+15550100006');
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    await oidc.tokenRevocation(config, tokens.refresh_token as string, { token_type_hint: 'refresh_token' });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  test('when an enterprise client introspects and revokes its client_credentials token, then it is active, then inactive and refused by the API', async () => {
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Backend',
      scopes: ['otp'],
      allowedIps: ['127.0.0.1/32', '::1/128'],
    });
    const config = await discover(client.clientId, clientSecret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'otp' });
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: client.clientId, scope: 'otp', token_type: 'Bearer' });
    expect(introspected.exp).toBeGreaterThan(Date.now() / 1000);
    const callApi = () =>
      fetch(`${service.url}/v1/svc-otp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
        body: '{}',
      });
    // Accepted by the bearer check (the empty body is then refused with 400).
    expect((await callApi()).status).toBe(400);
    await oidc.tokenRevocation(config, tokens.access_token, { token_type_hint: 'access_token' });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect((await callApi()).status).toBe(401);
  });

  test('when an app reads userinfo and signs the user out, then userinfo names the user, the next authorization needs a login and the refresh token is refused', async () => {
    const postLogout = 'http://127.0.0.1:9/signed-out';
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'Sign-out app',
      scopes: [],
      redirectUris: [redirectUri, postLogout],
    });
    await insertUser(service.ctx.mongo, { userId: 'oc-dave', mobileNumber: '+15550100007' });
    const config = await discover(client.clientId, clientSecret);
    expect(config.serverMetadata()).toMatchObject({
      end_session_endpoint: `${issuer.toString()}/session/end`,
      userinfo_endpoint: `${issuer.toString()}/userinfo`,
    });
    const walker = new FormWalker(service.url);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const codeChallenge = await oidc.calculatePKCECodeChallenge(codeVerifier);
    const authorization = (prompt = 'consent') =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid offline_access notifications',
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        prompt,
      });
    const callback = await signInWithForms(service, walker, authorization().toString(), 'oc-dave', '+15550100007');
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: codeVerifier });
    const claims = tokens.claims();
    expect(claims).toMatchObject({ sub: 'oc-dave', auth_time: expect.any(Number), sid: expect.any(String) });
    expect(await oidc.fetchUserInfo(config, tokens.access_token, 'oc-dave')).toEqual({ sub: 'oc-dave', enterprise_id: 'default' });

    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: postLogout,
      state: 'bye',
    });
    const page = await walker.page(endSession.toString());
    expect(page.status).toBe(200);
    expect(page.html).toContain('Sign out?');
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)?.[1] as string;
    const action = /<form method="post" action="([^"]+)"/.exec(page.html)?.[1] as string;
    const back = new URL(await walker.leaves(action, { form: { xsrf, logout: 'yes' } }));
    expect(`${back.origin}${back.pathname}`).toBe(postLogout);
    expect(back.searchParams.get('state')).toBe('bye');

    const next = await walker.page(authorization().toString());
    expect(next.status).toBe(200);
    expect(next.html).toContain('name="userId"');
    const silent = new URL(await walker.leaves(authorization('none').toString()));
    expect(silent.searchParams.get('error')).toBe('login_required');
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });
});
