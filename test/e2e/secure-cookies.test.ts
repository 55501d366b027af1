import type { Browser, BrowserContext } from 'playwright-core';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { launchBrowser } from '../support/browser.js';
import { authorizeUrl, exchangeCode, registerTestApp, TEST_APP_REDIRECT_URI, type TestApp } from '../support/oauth-flow-helpers.js';
import { loginCodeFor } from '../support/sign-in-helpers.js';
import { freePort, memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { startTlsFront, type TlsFront } from '../support/tls-front.js';
import { insertUser } from '../support/user-fixtures.js';

/**
 * The service behind https, as deployed (TLS ends at a front, PUBLIC_URL is https): a real browser
 * signs in, and every cookie the authorization server sets is prefixed, Secure and HttpOnly.
 */
describe('sign-in cookies behind https', () => {
  let service: TestService;
  let front: TlsFront;
  let worker: RunningWorker;
  let browser: Browser | undefined;
  let app: TestApp;

  beforeAll(async () => {
    const port = await freePort();
    service = await startTestService('secure-cookies', { PUBLIC_URL: `https://localhost:${port}` });
    front = await startTlsFront(port, service.url);
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await registerTestApp(service, { name: 'Acme Bank' });
    await insertUser(service.ctx.mongo, { userId: 'alice', mobileNumber: '+15550200071' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker.shutdown();
    await front.close();
    await service.close();
  });

  /** Signs alice in on the pages; answers the app's redirect URI itself (nothing listens there) and returns its URL. */
  async function signIn(
    context: BrowserContext,
  ): Promise<{ callback: string; duringSignIn: Awaited<ReturnType<BrowserContext['cookies']>> }> {
    const page = await context.newPage();
    await page.route(`${TEST_APP_REDIRECT_URI}**`, (route) => route.fulfill({ status: 200, body: 'app' }));
    await page.goto(authorizeUrl(front, app));
    const since = new Date();
    await page.getByLabel('User ID').fill('alice');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Sign-in code').fill(await loginCodeFor(service, '+15550200071', since));
    const duringSignIn = await context.cookies();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${TEST_APP_REDIRECT_URI}**`);
    return { callback: page.url(), duringSignIn };
  }

  test('when a person signs in, then the session cookie is __Host- and the sign-in cookies __Secure-, all Secure, HttpOnly and SameSite=Lax, and the code is exchanged', async () => {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const { callback, duringSignIn } = await signIn(context);

    const interaction = duringSignIn.filter((c) => c.name.startsWith('__Secure-svc-interaction'));
    expect(interaction.map((c) => c.name)).toEqual(expect.arrayContaining(['__Secure-svc-interaction', '__Secure-svc-interaction-resume']));
    for (const cookie of interaction) {
      expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', domain: 'localhost' });
      expect(cookie.path).toMatch(/^\/svc\/authserver\//);
    }

    const after = await context.cookies();
    const session = after.find((c) => c.name === '__Host-svc-session');
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/', domain: 'localhost' });
    // Every cookie of the service carries a prefix: none a browser would take from plain http.
    expect([...duringSignIn, ...after].filter((c) => !/^__(Host|Secure)-svc-/.test(c.name))).toEqual([]);

    expect(new URL(callback).searchParams.get('state')).toBe('st-1');
    const tokens = await exchangeCode(service, app, callback);
    const idTokenPayload = JSON.parse(Buffer.from(tokens.id_token?.split('.')[1] ?? '', 'base64url').toString()) as {
      iss: string;
      sub: string;
    };
    expect(idTokenPayload).toMatchObject({ iss: `${front.url}/svc/authserver`, sub: 'alice' });
    await context.close();
  });

  test('when the signed-in person signs out, then the __Host- session carries the sign-out page (its CSRF check included) and is gone after it', async () => {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    await signIn(context);
    expect((await context.cookies()).map((c) => c.name)).toContain('__Host-svc-session');

    const page = await context.newPage();
    await page.route(`${TEST_APP_REDIRECT_URI}**`, (route) => route.fulfill({ status: 200, body: 'app' }));
    const params = new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: TEST_APP_REDIRECT_URI, state: 'bye' });
    await page.goto(`${front.url}/svc/authserver/session/end?${params.toString()}`);
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${TEST_APP_REDIRECT_URI}?state=bye`);
    expect((await context.cookies()).map((c) => c.name)).not.toContain('__Host-svc-session');

    // Signed out: the next authorization shows the login page again.
    await page.goto(authorizeUrl(front, app));
    await page.getByLabel('User ID').waitFor();
    await context.close();
  });
});
