import { decodeJwt } from 'jose';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { authorizeUrl, exchangeCode, readMe, type TestApp } from '../support/oauth-flow-helpers.js';
import { FormWalker, signInWithForms } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * A browser session belongs to one enterprise: the same userId enrolled in two enterprises is two
 * people, and signing in at one enterprise's app never signs anyone in at another's.
 */
describe('authorization server: one enterprise per browser session', () => {
  let service: TestService;
  let worker: RunningWorker;
  const apps: Record<'a' | 'b' | 'c', TestApp> = {} as Record<'a' | 'b' | 'c', TestApp>;

  beforeAll(async () => {
    service = await startTestService('auth-ent-sessions', {}, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    for (const [name, enterpriseId] of [
      ['a', 'ent-a'],
      ['b', 'ent-b'],
      ['c', 'ent-c'],
    ] as const) {
      const redirectUri = `http://127.0.0.1:9/${name}/callback`;
      const { client, clientSecret } = await registerClient(service.services.clients, {
        name: `App ${name}`,
        enterpriseId,
        scopes: [],
        redirectUris: [redirectUri],
      });
      apps[name] = { clientId: client.clientId, clientSecret: clientSecret as string, redirectUri };
    }
    await insertUser(service.ctx.mongo, { enterpriseId: 'ent-a', userId: 'twin', mobileNumber: '+15550300001' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'ent-b', userId: 'twin', mobileNumber: '+15550300002' });
    await insertUser(service.ctx.mongo, { enterpriseId: 'ent-a', userId: 'to-block', mobileNumber: '+15550300003' });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  const isLoginPage = (html: string) => html.includes('name="userId"');

  test("when twin signs in at enterprise A's app, then B's app in the same browser shows the login page, and prompt=none answers login_required to B", async () => {
    const walker = new FormWalker(service.url);
    const callback = await signInWithForms(service, walker, authorizeUrl(service, apps.a), 'twin', '+15550300001');
    const tokens = await exchangeCode(service, apps.a, callback);
    // Tokens name the user by the bare userId, and /v1/me reads A's twin.
    expect(decodeJwt(tokens.id_token as string).sub).toBe('twin');
    const me = await readMe(service, tokens.access_token as string);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ userId: 'twin', mobileNumber: '+15550300001' });

    // A again: the session serves A at once.
    const again = await walker.leaves(authorizeUrl(service, apps.a, { prompt: 'none' }));
    expect(new URL(again).searchParams.get('code')).toEqual(expect.any(String));

    // B: never a code for B's own twin.
    const atB = await walker.page(authorizeUrl(service, apps.b));
    expect(atB.status).toBe(200);
    expect(isLoginPage(atB.html)).toBe(true);
    const silentB = new URL(await walker.leaves(authorizeUrl(service, apps.b, { prompt: 'none' })));
    expect(`${silentB.origin}${silentB.pathname}`).toBe(apps.b.redirectUri);
    expect(Object.fromEntries(silentB.searchParams)).toMatchObject({ error: 'login_required', state: 'st-1' });
    expect(silentB.searchParams.get('code')).toBeNull();
  });

  test('when the enterprise of the app has no user of that id, then prompt=none answers login_required (not an error page) and the login page is shown otherwise', async () => {
    const walker = new FormWalker(service.url);
    await signInWithForms(service, walker, authorizeUrl(service, apps.a), 'twin', '+15550300001');
    const silent = new URL(await walker.leaves(authorizeUrl(service, apps.c, { prompt: 'none' })));
    expect(`${silent.origin}${silent.pathname}`).toBe(apps.c.redirectUri);
    expect(silent.searchParams.get('error')).toBe('login_required');
    const page = await walker.page(authorizeUrl(service, apps.c));
    expect(page.status).toBe(200);
    expect(isLoginPage(page.html)).toBe(true);
  });

  test("when twin then signs in at B in the same browser, then B's token reads B's twin and A's app needs a sign-in again", async () => {
    const walker = new FormWalker(service.url);
    await signInWithForms(service, walker, authorizeUrl(service, apps.a), 'twin', '+15550300001');
    const callback = await signInWithForms(service, walker, authorizeUrl(service, apps.b), 'twin', '+15550300002');
    const tokens = await exchangeCode(service, apps.b, callback);
    expect(await (await readMe(service, tokens.access_token as string)).json()).toMatchObject({
      userId: 'twin',
      mobileNumber: '+15550300002',
    });
    const silentA = new URL(await walker.leaves(authorizeUrl(service, apps.a, { prompt: 'none' })));
    expect(silentA.searchParams.get('error')).toBe('login_required');
  });

  test('when a user is blocked while signed in, then the next authorization shows the login page and prompt=none answers login_required', async () => {
    const walker = new FormWalker(service.url);
    await signInWithForms(service, walker, authorizeUrl(service, apps.a), 'to-block', '+15550300003');
    const blocked = await fetch(`${service.url}/admin/users/to-block/blocked?enterpriseId=ent-a`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blocked: true }),
    });
    expect(blocked.status).toBe(200);
    const page = await walker.page(authorizeUrl(service, apps.a));
    expect(page.status).toBe(200);
    expect(isLoginPage(page.html)).toBe(true);
    const silent = new URL(await walker.leaves(authorizeUrl(service, apps.a, { prompt: 'none' })));
    expect(silent.searchParams.get('error')).toBe('login_required');
  });
});
