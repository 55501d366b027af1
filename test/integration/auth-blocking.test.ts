import { createClientWithToken } from '../support/auth-helpers.js';
import { userModel } from '../../core/users/users.repository.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { authorizeUrl, exchangeCode, postToAuthServer, readMe, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * Blocking a user ends what they hold: access tokens, refresh tokens and browser sessions.
 * Unblocking restores none of it; the user signs in again. Deleting a user ends the same.
 */
describe('authorization server: blocking ends access, refresh and sessions', () => {
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  const offline = { scope: 'openid offline_access notifications', prompt: 'consent' };

  beforeAll(async () => {
    service = await startTestService('auth-blocking', {}, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Bank' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const setBlocked = (userId: string, blocked: boolean) =>
    fetch(`${service.url}/admin/users/${userId}/blocked`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blocked }),
    });
  const refresh = (refreshToken: string) =>
    postToAuthServer(service, '/oauth/token', app, { grant_type: 'refresh_token', refresh_token: refreshToken });
  const introspect = async (token: string) =>
    (await (await postToAuthServer(service, '/oauth/introspect', app, { token })).json()) as Record<string, unknown>;
  const recordsOf = async (accountId: string) =>
    (await service.ctx.mongo.db!.collection('oidc_records').find({ accountId }).toArray()).map((r) => ({
      kind: r.kind as string,
      ended: r.endedAt instanceof Date,
    }));

  async function signedIn(userId: string, mobileNumber: string) {
    await insertUser(service.ctx.mongo, { userId, mobileNumber });
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(service, walker, authorizeUrl(service, app, offline), userId, mobileNumber);
    const tokens = await exchangeCode(service, app, callback);
    expect(typeof tokens.refresh_token).toBe('string');
    return { walker, tokens };
  }

  test('when a signed-in user is blocked and then unblocked, then the old access token, the refresh token and the browser session stay ended', async () => {
    const { walker, tokens } = await signedIn('blk-1', '+15550400001');
    expect((await readMe(service, tokens.access_token as string)).status).toBe(200);
    expect((await recordsOf('default:blk-1')).map((r) => r.kind).sort()).toEqual(
      expect.arrayContaining(['AccessToken', 'Grant', 'RefreshToken', 'Session']),
    );

    expect((await setBlocked('blk-1', true)).status).toBe(200);
    const blocked = await readMe(service, tokens.access_token as string);
    expect(blocked.status).toBe(403);
    expect(await blocked.json()).toEqual({ error: 'user_blocked', error_description: 'User is blocked', code: 141 });
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
    // Only the ended access tokens remain, kept until they expire.
    expect(await recordsOf('default:blk-1')).toEqual([{ kind: 'AccessToken', ended: true }]);

    expect((await setBlocked('blk-1', false)).status).toBe(200);
    const after = await readMe(service, tokens.access_token as string);
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({
      error: 'invalid_token',
      error_description: `Invalid access token: ${tokens.access_token}`,
      code: 39,
    });
    const refused = await refresh(tokens.refresh_token as string);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
    const page = await walker.page(authorizeUrl(service, app));
    expect(page.status).toBe(200);
    expect(page.html).toContain('name="userId"');

    // Signing in again gives working tokens.
    const callback = await signInWithForms(service, walker, authorizeUrl(service, app, offline), 'blk-1', '+15550400001');
    const fresh = await exchangeCode(service, app, callback);
    expect((await readMe(service, fresh.access_token as string)).status).toBe(200);
    expect((await refresh(fresh.refresh_token as string)).status).toBe(200);
  });

  test('when a block stopped after storing the block (a crash), then blocking again ends the tokens and sessions', async () => {
    const { walker, tokens } = await signedIn('blk-2', '+15550400002');
    // The first step of blocking only, as if the process died right after it.
    const Users = await userModel(service.ctx.mongo);
    await Users.updateOne({ enterpriseId: 'default', userId: 'blk-2' }, { $set: { blocked: { at: new Date() } } });
    expect((await recordsOf('default:blk-2')).length).toBeGreaterThan(1);

    expect((await setBlocked('blk-2', true)).status).toBe(200);
    expect(await recordsOf('default:blk-2')).toEqual([{ kind: 'AccessToken', ended: true }]);
    expect((await setBlocked('blk-2', false)).status).toBe(200);
    expect((await readMe(service, tokens.access_token as string)).status).toBe(401);
    expect((await refresh(tokens.refresh_token as string)).status).toBe(400);
    expect((await walker.page(authorizeUrl(service, app))).html).toContain('name="userId"');
  });

  test('when a code exchange has checked the user just before the user is blocked, then it issues no token that works after unblocking', async () => {
    await insertUser(service.ctx.mongo, { userId: 'blk-3', mobileNumber: '+15550400004' });
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(service, walker, authorizeUrl(service, app, offline), 'blk-3', '+15550400004');
    // Hold the exchange right after the authorization server has read the user (not yet blocked).
    const users = service.services.authServer.users;
    const findUser = users.findUser.bind(users);
    let userRead = () => {};
    const read = new Promise<void>((resolve) => (userRead = resolve));
    let releaseExchange = () => {};
    const released = new Promise<void>((resolve) => (releaseExchange = resolve));
    users.findUser = async (ref) => {
      const user = await findUser(ref);
      if (ref.userId === 'blk-3') {
        users.findUser = findUser;
        userRead();
        await released;
      }
      return user;
    };
    try {
      const exchange = postToAuthServer(service, '/oauth/token', app, {
        grant_type: 'authorization_code',
        code: new URL(callback).searchParams.get('code') as string,
        redirect_uri: app.redirectUri,
      });
      await read;
      expect((await setBlocked('blk-3', true)).status).toBe(200);
      releaseExchange();
      const answer = await exchange;
      const body = (await answer.json()) as Record<string, string>;
      expect((await setBlocked('blk-3', false)).status).toBe(200);
      // Whatever the exchange answered, nothing it issued outlives the block.
      if (body.access_token) expect((await readMe(service, body.access_token)).status).toBe(401);
      if (body.refresh_token) expect((await refresh(body.refresh_token)).status).toBe(400);
      expect(await recordsOf('default:blk-3')).toEqual([]);
    } finally {
      users.findUser = findUser;
    }
  });

  test('when a signed-in user is deleted, then introspection says inactive for their access and refresh tokens and their sign-in records are gone', async () => {
    const { tokens } = await signedIn('del-1', '+15550400003');
    expect(await introspect(tokens.access_token as string)).toMatchObject({ active: true });
    const enterprise = await createClientWithToken(service, { scopes: ['users'] });

    const deleted = await fetch(`${service.url}/v1/users/del-1`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${enterprise.accessToken}` },
    });
    expect(deleted.status).toBe(204);
    expect(await introspect(tokens.access_token as string)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token as string)).toEqual({ active: false });
    expect(await recordsOf('default:del-1')).toEqual([{ kind: 'AccessToken', ended: true }]);
    expect((await readMe(service, tokens.access_token as string)).status).toBe(401);
    const refused = await refresh(tokens.refresh_token as string);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('when the records are stored, then the account is indexed so blocking deletes by index', async () => {
    const indexes = await service.ctx.mongo.db!.collection('oidc_records').indexes();
    expect(indexes.map((i) => i.key)).toContainEqual({ accountId: 1 });
  });
});
