import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { authorizeUrl, exchangeCode, postToAuthServer, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { FormWalker, signInWithForms, type Page } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { untilClockReaches } from '../support/waiting.js';

/** Sign-out (OpenID Connect RP-Initiated Logout 1.0) on server-rendered pages. */
describe('authorization server: sign-out', () => {
  let service: TestService;
  let worker: RunningWorker;
  let app: TestApp;
  const signedOut = 'http://127.0.0.1:9/signed-out';

  beforeAll(async () => {
    service = await startTestService('auth-sign-out', {}, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Bank', moreRedirectUris: [signedOut] });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const endSession = (params: Record<string, string>) =>
    `${service.url}/svc/authserver/session/end?${new URLSearchParams(params).toString()}`;
  const formOf = (page: Page) => ({
    action: /<form method="post" action="([^"]+)"/.exec(page.html)?.[1] as string,
    xsrf: /name="xsrf" value="([^"]+)"/.exec(page.html)?.[1] as string,
  });

  async function signedIn(userId: string, mobileNumber: string) {
    await insertUser(service.ctx.mongo, { userId, mobileNumber });
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(
      service,
      walker,
      authorizeUrl(service, app, { scope: 'openid offline_access notifications', prompt: 'consent' }),
      userId,
      mobileNumber,
    );
    return { walker, tokens: await exchangeCode(service, app, callback) };
  }

  test('when the sign-out page is shown, then it is our page: nothing loads from elsewhere, not cached, not framed, with a CSRF token', async () => {
    const { walker } = await signedIn('so-1', '+15550600001');
    const page = await walker.page(endSession({ client_id: app.clientId, post_logout_redirect_uri: signedOut }));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Sign out?');
    expect(page.html).not.toMatch(/<script|src=|href="http/);
    const csp = page.headers.get('content-security-policy') as string;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9");
    expect(page.headers.get('cache-control')).toContain('no-store');
    expect(formOf(page).xsrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  test('when the sign-out form is posted without its CSRF token, then it is refused and the user stays signed in', async () => {
    const { walker } = await signedIn('so-2', '+15550600002');
    const page = await walker.page(endSession({ client_id: app.clientId }));
    const refused = await walker.page(formOf(page).action, { form: { xsrf: 'forged', logout: 'yes' } });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('xsrf token invalid');
    const silent = new URL(await walker.leaves(authorizeUrl(service, app, { prompt: 'none' })));
    expect(silent.searchParams.get('code')).toEqual(expect.any(String));
  });

  test('when post_logout_redirect_uri is not registered exactly, then an error page and no redirect', async () => {
    const { walker } = await signedIn('so-3', '+15550600003');
    for (const uri of [`${signedOut}/x`, 'https://evil.example/signed-out', `${signedOut}?a=1`]) {
      const page = await walker.page(endSession({ client_id: app.clientId, post_logout_redirect_uri: uri }));
      expect(page.status).toBe(400);
      expect(page.html).toContain('post_logout_redirect_uri not registered');
    }
  });

  test('when the user signs out, then the session and its refresh tokens end, and without a return address the signed-out page shows', async () => {
    const { walker, tokens } = await signedIn('so-4', '+15550600004');
    const page = await walker.page(endSession({ client_id: app.clientId }));
    const { action, xsrf } = formOf(page);
    const done = await walker.page(action, { form: { xsrf, logout: 'yes' } });
    expect(done.status).toBe(200);
    expect(done.html).toContain('You are signed out');
    const next = await walker.page(authorizeUrl(service, app));
    expect(next.html).toContain('name="userId"');
    const refresh = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  test("when the sign-out page was shown just before the session's end and its button is pressed after it, then the person is signed out as before the end: back to the app, and the session's grants are gone", async () => {
    const { walker, tokens } = await signedIn('so-6', '+15550600006');
    const sessions = service.ctx.mongo.collection<{ kind: string; accountId?: string }>('oidc_records');
    const ofUser = { kind: 'Session', accountId: 'default:so-6' };
    // The sign-in as if made a lifetime ago, its session stored as it was then: 3 s of it are left.
    const endsAt = Math.floor(Date.now() / 1000) + 3;
    const signedInAt = endsAt - service.config.signIn.sessionTtlSeconds;
    await sessions.updateOne(ofUser, {
      $set: { 'payload.loginTs': signedInAt, 'payload.exp': endsAt, expiresAt: new Date(endsAt * 1000) },
    });
    const page = await walker.page(endSession({ client_id: app.clientId, post_logout_redirect_uri: signedOut, state: 's-6' }));
    expect(page.html).toContain('Sign out?');
    // The person reads the page while the session's lifetime ends; MongoDB's TTL monitor removes
    // the ended record at any moment of the following minute: here, at once.
    await untilClockReaches(endsAt * 1000 + 500);
    await sessions.deleteOne(ofUser);
    const { action, xsrf } = formOf(page);
    const back = new URL(await walker.leaves(action, { form: { xsrf, logout: 'yes' } }));
    expect(`${back.origin}${back.pathname}`).toBe(signedOut);
    expect(back.searchParams.get('state')).toBe('s-6');
    // Nothing of the session is left, nor of its sign-out form.
    expect(await sessions.countDocuments({ accountId: 'default:so-6', kind: /^Session/ })).toBe(0);
    // Its offline_access grant, which outlives the session's end by design, ended with the sign-out.
    const refresh = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test("when the sign-out page is loaded just after the session's end, then nobody is signed in there: its confirmation posts itself and returns to the app", async () => {
    const { walker } = await signedIn('so-8', '+15550600008');
    const sessions = service.ctx.mongo.collection<{ kind: string; accountId?: string }>('oidc_records');
    const endsAt = Math.floor(Date.now() / 1000) + 1;
    const signedInAt = endsAt - service.config.signIn.sessionTtlSeconds;
    await sessions.updateOne(
      { kind: 'Session', accountId: 'default:so-8' },
      { $set: { 'payload.loginTs': signedInAt, 'payload.exp': endsAt, expiresAt: new Date(endsAt * 1000) } },
    );
    // Within the provider's 15 s of clock tolerance past the session's `exp`.
    await untilClockReaches(endsAt * 1000 + 500);
    const page = await walker.page(endSession({ client_id: app.clientId, post_logout_redirect_uri: signedOut, state: 's-8' }));
    expect(page.html).not.toContain('Sign out?');
    const fields = Object.fromEntries(
      [...page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1], m[2]]),
    );
    const back = new URL(await walker.leaves(formOf(page).action, { form: fields as Record<string, string> }));
    expect(`${back.origin}${back.pathname}`).toBe(signedOut);
    expect(back.searchParams.get('state')).toBe('s-8');
  });

  test("when a sign-out form is posted after its session's end without the form's token, then it is refused, the session stays ended and its grants stay", async () => {
    const { walker, tokens } = await signedIn('so-7', '+15550600007');
    const sessions = service.ctx.mongo.collection<{ kind: string; accountId?: string }>('oidc_records');
    const ofUser = { kind: 'Session', accountId: 'default:so-7' };
    const endsAt = Math.floor(Date.now() / 1000) + 3;
    const signedInAt = endsAt - service.config.signIn.sessionTtlSeconds;
    await sessions.updateOne(ofUser, {
      $set: { 'payload.loginTs': signedInAt, 'payload.exp': endsAt, expiresAt: new Date(endsAt * 1000) },
    });
    const page = await walker.page(endSession({ client_id: app.clientId }));
    await untilClockReaches(endsAt * 1000 + 500);
    const refused = await walker.page(formOf(page).action, { form: { xsrf: 'forged', logout: 'yes' } });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('xsrf token invalid');
    // Ended it stays: the next authorization asks for a sign-in.
    const silent = new URL(await walker.leaves(authorizeUrl(service, app, { prompt: 'none' })));
    expect(silent.searchParams.get('error')).toBe('login_required');
    const refresh = await postToAuthServer(service, '/oauth/token', app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
    });
    expect(refresh.status).toBe(200);
  });

  test('when nobody is signed in, then sign-out returns to the registered address with the state', async () => {
    const walker = new FormWalker(service.url);
    const page = await walker.page(endSession({ client_id: app.clientId, post_logout_redirect_uri: signedOut, state: 's-9' }));
    // The provider posts its own confirmation form (a browser does it by itself).
    const fields = Object.fromEntries(
      [...page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1], m[2]]),
    );
    const back = new URL(await walker.leaves(formOf(page).action, { form: fields as Record<string, string> }));
    expect(`${back.origin}${back.pathname}`).toBe(signedOut);
    expect(back.searchParams.get('state')).toBe('s-9');
  });

  test('when nobody is signed in, then the session stored for the sign-out form lives as long as a sign-in page (SIGN_IN_INTERACTION_TTL_SECONDS), not a day', async () => {
    const res = await fetch(endSession({ client_id: app.clientId }), { redirect: 'manual' });
    expect(res.status).toBe(200);
    const id = /_session=([^;]+)/.exec(res.headers.getSetCookie().join('; '))?.[1] as string;
    const stored = await service.ctx.mongo
      .collection<{ kind: string; key: string; payload: { accountId?: string; exp: number }; expiresAt: Date }>('oidc_records')
      .findOne({ kind: 'Session', key: id });
    expect(stored?.payload.accountId).toBeUndefined();
    const limit = Date.now() + service.config.signIn.interactionTtlSeconds * 1000;
    expect(stored?.expiresAt.getTime()).toBeLessThanOrEqual(limit);
    expect(stored?.payload.exp).toBeLessThanOrEqual(Math.ceil(limit / 1000));
  });

  test('when userinfo is called, then it answers sub for a token with openid, 403 without openid and 401 without a user token', async () => {
    const { tokens } = await signedIn('so-5', '+15550600005');
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${service.url}/svc/authserver/userinfo`, {
        method,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ sub: 'so-5', enterprise_id: 'default' });
    }
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(service, walker, authorizeUrl(service, app, { scope: 'notifications' }), 'so-5', '+15550600005');
    const apiOnly = await exchangeCode(service, app, callback);
    const noOpenid = await fetch(`${service.url}/svc/authserver/userinfo`, {
      headers: { authorization: `Bearer ${apiOnly.access_token}` },
    });
    expect(noOpenid.status).toBe(403);
    expect(await noOpenid.json()).toEqual({
      error: 'insufficient_scope',
      error_description: "The access token does not grant the scope 'openid'",
    });
    const none = await fetch(`${service.url}/svc/authserver/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer error="unauthorized"');
  });
});
