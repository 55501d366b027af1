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
    const { client, clientSecret } = await registerClient(service.ctx.mongo, {
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
    expect(tokens.claims()?.sub).toBe('oc-alice');
    expect(typeof tokens.refresh_token).toBe('string');

    const me = await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ userId: 'oc-alice', status: 'ACTIVE' });

    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, sub: 'oc-alice', client_id: client.clientId, token_type: 'Bearer' });

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
    const { client, clientSecret } = await registerClient(service.ctx.mongo, { name: 'Revoker', scopes: [], redirectUris: [redirectUri] });
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
    const { client } = await registerClient(service.ctx.mongo, {
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
    // Introspection and revocation are for confidential clients.
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    await expect(oidc.tokenRevocation(config, tokens.access_token)).rejects.toMatchObject({ error: 'unauthorized_client' });
  });
});
