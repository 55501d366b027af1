import { mkdirSync } from 'node:fs';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { launchBrowser } from '../support/browser.js';
import { readOutbox } from '../support/otp-helpers.js';
import { controlsCoveredBy, gapBelowHeader, isInViewport } from '../support/page-layout.js';
import { loginCodeFor } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, warningsIn, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const USER_ID = 'pat';
const EMAIL = 'pat@example.com';
const VIEWPORT = { width: 1000, height: 760 };
const WIDTHS = [1280, 390];

/**
 * Passkeys in Debian's Chromium with a virtual authenticator (DevTools protocol, WebAuthn
 * domain): added in the approver app, used on the login page, refused once removed by the admin
 * and once the user is blocked. The service is published at localhost: browsers take no IP
 * address as a relying party id.
 */
describe('passkeys in a real browser', () => {
  let service: TestService;
  let worker: RunningWorker;
  let browser: Browser | undefined;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId = '';
  const errors: string[] = [];
  const workerLog = memoryLogger();

  beforeAll(async () => {
    mkdirSync('test-results', { recursive: true });
    service = await startTestService('passkeys-e2e', { DEMO_APPROVER: 'on' }, { ownPublicUrl: true, publicHost: 'localhost' });
    worker = await startDispatchWorker(service.config, workerLog.logger);
    await insertUser(service.ctx.mongo, { userId: USER_ID, firstName: 'Pat', lastName: 'Passkey', emailId: EMAIL });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: VIEWPORT });
    page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) errors.push(message.text());
    });
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    // A platform authenticator with a screen lock the "person" always passes.
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  });
  afterAll(async () => {
    await browser?.close();
    await worker.shutdown();
    await service.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${service.config.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const passkeysOf = async () => (await (await admin('GET', `/admin/users/${USER_ID}/passkeys`)).json()) as { id: string; name: string }[];

  async function signInWithCode(): Promise<void> {
    await page.waitForLoadState('networkidle');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The service's login page: until it has loaded, the app's activation form (whose "User id"
    // a loose label match would also find) is still the page, and a fill there is lost.
    await page.waitForURL((url) => url.pathname.startsWith('/svc/authserver/interaction/'));
    await codeSignInOnLoginPage();
  }

  /** On the service's login page: the user id, the code sent by e-mail, back in the app signed in. */
  async function codeSignInOnLoginPage(): Promise<void> {
    const since = new Date();
    await page.getByLabel('User ID', { exact: true }).fill(USER_ID);
    await page.getByRole('button', { name: 'Continue' }).click();
    const code = await loginCodeFor(service, EMAIL, since).catch(async (err: Error) => {
      // What the browser showed meanwhile, for the log of a run that found no code.
      const workerWarnings = warningsIn(workerLog.lines());
      throw new Error(
        `${err.message}\npage ${page.url()}: ${(await page.locator('body').innerText()).slice(0, 500)}\nworker: ${JSON.stringify(workerWarnings).slice(0, 2000)}`,
        { cause: err },
      );
    });
    await page.getByLabel('Sign-in code').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
  }

  async function addPasskey(name: string): Promise<void> {
    await page.getByLabel('Name of the new passkey').fill(name);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Passkey ${name} added.` })
      .waitFor();
    await page.getByRole('button', { name: `Remove ${name}` }).waitFor();
  }

  async function signOut(): Promise<void> {
    await page.locator('#signout-button').click();
    await page.waitForURL((url) => url.pathname.startsWith('/svc/authserver/session/end'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Not signed in').waitFor();
  }

  /** From the app's Sign in to the login page, then the passkey button. */
  async function usePasskey(screenshot?: string): Promise<void> {
    // "Not signed in" and the Sign in button are in the page's HTML: the app's script has run
    // (and listens to the button) once its requests are done.
    await page.waitForLoadState('networkidle');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    expect(await page.getByLabel('User ID', { exact: true }).getAttribute('autocomplete')).toBe('username webauthn');
    if (screenshot) await page.screenshot({ path: screenshot });
    await button.click();
  }

  test('when a signed-in person adds a passkey in the approver app, then they sign in with it next time, without a code', async () => {
    await page.goto(`${service.url}/demo/approver/`);
    await signInWithCode();
    await page.getByText('No passkeys yet.').waitFor();
    await addPasskey('This laptop');
    expect((await passkeysOf()).map((p) => p.name)).toEqual(['This laptop']);
    await page.screenshot({ path: 'test-results/passkeys-approver-added.png', fullPage: true });
    // The message is where the person looks and hides nothing they need, at desktop and phone width.
    const added = page.getByRole('status').filter({ hasText: 'Passkey This laptop added.' });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: VIEWPORT.height });
      expect(await controlsCoveredBy(page, added)).toEqual([]);
      expect(await gapBelowHeader(page)).toBeLessThanOrEqual(16);
      await page.getByRole('button', { name: 'Add a passkey' }).scrollIntoViewIfNeeded();
      expect(await isInViewport(page, added)).toBe(true);
      await page.screenshot({ path: `test-results/passkeys-approver-added-${width}.png` });
    }
    await page.setViewportSize(VIEWPORT);

    // Conditional UI: the login page asks for a passkey at once, which this authenticator (always
    // present, one passkey) answers by itself, as a person picking it in the field's suggestions.
    await signOut();
    const since = new Date();
    await page.waitForLoadState('networkidle');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    await page.getByText(/last used/).waitFor();

    // The button, in a browser without conditional UI.
    await signOut();
    await page.addInitScript('Object.defineProperty(PublicKeyCredential, "isConditionalMediationAvailable", { value: undefined })');
    await usePasskey('test-results/passkey-sign-in.png');
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    // No code was sent for either sign-in.
    expect((await readOutbox(service, EMAIL)).filter((m) => new Date(m.createdAt) >= since)).toEqual([]);
    expect(errors).toEqual([]);
  }, 120000);

  test('when the admin removes the passkey, then the login page refuses it and the code still works', async () => {
    const [passkey] = await passkeysOf();
    expect((await admin('DELETE', `/admin/users/${USER_ID}/passkeys/${passkey?.id ?? ''}?comments=lost%20laptop`)).status).toBe(204);
    await signOut();
    await usePasskey();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This passkey is not registered for this app. Use another passkey, or continue with your user id.' })
      .waitFor();
    await page.screenshot({ path: 'test-results/passkeys-removed.png' });
    await codeSignInOnLoginPage();
    expect(errors).toEqual([]);
  }, 120000);

  test("when the sign-in is older than 5 minutes, then adding a passkey asks to confirm it's you, and after the sign-in the passkey is added", async () => {
    await page.goto(`${service.url}/demo/approver/`);
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    // Six minutes on, for the app's token and for the service's session cookie alike.
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 360;
    const records = service.ctx.mongo.collection('oidc_records');
    await records.updateMany({ kind: 'AccessToken' }, { $set: { 'payload.extra.auth_time': sixMinutesAgo } });
    await records.updateMany({ kind: 'Session' }, { $set: { 'payload.loginTs': sixMinutesAgo } });

    await page.getByLabel('Name of the new passkey').fill('Confirmed');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: "Adding a passkey needs a recent sign-in. Confirm it's you" }).waitFor();
    await page.screenshot({ path: 'test-results/passkeys-confirm-needed.png', fullPage: true });
    await page.getByRole('button', { name: "Confirm it's you" }).click();
    // The service asks who this is again, although its session cookie is still there. (Its login
    // page, not the app's activation form, whose "User id" field is still on screen meanwhile.)
    await page.waitForURL((url) => url.pathname.startsWith('/svc/authserver/interaction/'));
    await codeSignInOnLoginPage();
    await addPasskey('Confirmed');
    expect((await passkeysOf()).map((p) => p.name)).toEqual(['Confirmed']);
    expect(errors).toEqual([]);
  }, 120000);

  test("when the sign-in is older than 10 minutes, then removing a passkey asks to confirm it's you, and after the sign-in it is removed", async () => {
    await page.goto(`${service.url}/demo/approver/`);
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    await page.getByRole('button', { name: 'Remove Confirmed' }).waitFor();
    const elevenMinutesAgo = Math.floor(Date.now() / 1000) - 660;
    const records = service.ctx.mongo.collection('oidc_records');
    await records.updateMany({ kind: 'AccessToken' }, { $set: { 'payload.extra.auth_time': elevenMinutesAgo } });
    await records.updateMany({ kind: 'Session' }, { $set: { 'payload.loginTs': elevenMinutesAgo } });

    await page.getByRole('button', { name: 'Remove Confirmed' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: "Removing a passkey needs a recent sign-in. Confirm it's you, then remove it." })
      .waitFor();
    expect((await passkeysOf()).map((p) => p.name)).toEqual(['Confirmed']);
    await page.getByRole('button', { name: "Confirm it's you" }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/svc/authserver/interaction/'));
    await codeSignInOnLoginPage();
    await page.getByRole('button', { name: 'Remove Confirmed' }).click();
    await page.getByRole('status').filter({ hasText: 'Passkey Confirmed removed: it can no longer sign in.' }).waitFor();
    expect(await passkeysOf()).toEqual([]);
    expect(errors).toEqual([]);
  }, 120000);

  test('when the user is blocked, then their passkey signs nobody in', async () => {
    // The app opened afresh with the tab's tokens, signed in.
    await page.goto(`${service.url}/demo/approver/`);
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    // The device forgets the removed passkey, so the browser has one to offer, the new one.
    await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
    await addPasskey('Second try');
    expect((await admin('PUT', `/admin/users/${USER_ID}/blocked`, { blocked: true })).status).toBe(200);
    // Blocking ended the app's tokens: the tab forgets them (on a page of the service's origin
    // with no script of its own, so the app cannot store refreshed ones meanwhile) and opens the app.
    await page.goto(`${service.url}/healthz`);
    await page.evaluate('sessionStorage.clear()');
    await page.goto(`${service.url}/demo/approver/`);
    await usePasskey();
    await page.getByText('This account cannot sign in. Contact your administrator.').waitFor();
    expect(page.url()).toContain('/svc/authserver/interaction/');
    expect(errors).toEqual([]);
  }, 120000);
});
