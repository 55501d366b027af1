import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, Locator, Page, Response } from 'playwright-core';
import { registerClient } from '../../core/clients/clients.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { launchBrowser } from '../support/browser.js';
import { isInViewport } from '../support/page-layout.js';
import { startTestApp, type TestApp } from '../support/oauth-test-app.js';
import { eventually, readOutbox } from '../support/otp-helpers.js';
import { loginCodeFor } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/** A native app's private-use scheme redirect URI (RFC 8252 7.1). */
const NATIVE_REDIRECT = 'com.example.app:/oauth/callback';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** A user id as long as they come (64 characters) with nowhere a line may break: dots, underscores and `@` give none. */
const LONG_USER_ID = 'konstantinopoulou.alexandra_accounts.payables@northwind.holdings';

/**
 * A sign-in page as a person reads it, at each width (desktop and phone unless told): nothing
 * sticks out sideways, of the screen or of the card; what the page is about (`firstScreen`: its
 * heading, its message, the field and button to go on) is on the first screen without
 * scrolling; its text is at body size (16 px), only the muted small print (the app's name above
 * the heading, hints) smaller; each link on one line; the card keeps a readable line length on a wide screen and stays
 * inside a narrow one, clear of its side edges (its rounded corners and shadow never cut off by
 * them); and nothing so far broke the page's CSP or loaded from elsewhere
 * (`problems`, which the page's listeners fill). Screenshots: test-results/<shot>-<width>.png.
 */
async function expectReadableAtEachWidth(
  page: Page,
  check: { shot: string; firstScreen: (page: Page) => Locator[]; problems: string[]; viewports?: { width: number; height: number }[] },
): Promise<void> {
  for (const viewport of check.viewports ?? [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: `test-results/${check.shot}-${viewport.width}.png`, fullPage: true });
    const at = `${check.shot} at ${viewport.width} px`;
    // (Strings: these tests compile without the DOM's types.)
    const screenOverflow = Math.max(0, (await page.evaluate<number>('document.documentElement.scrollWidth')) - viewport.width);
    expect([at, 'sticks out of the screen by', screenOverflow]).toEqual([at, 'sticks out of the screen by', 0]);
    const card = page.locator('main');
    const cardOverflow = await page.evaluate<number>(
      "(() => { const main = document.querySelector('main'); return main.scrollWidth - main.clientWidth; })()",
    );
    expect([at, 'sticks out of the card by', cardOverflow]).toEqual([at, 'sticks out of the card by', 0]);
    // Each named (its locator's description) so that a failure says which one is off the screen.
    for (const element of check.firstScreen(page))
      expect([at, String(element), await isInViewport(page, element)]).toEqual([at, String(element), true]);
    const smallText = await page.evaluate<string[]>(
      `[...document.querySelectorAll('main h1, main p, main li, main label, main input:not([type=hidden]), main button')]
        .filter((e) => e.getClientRects().length > 0 && !e.matches('.app, .hint, .divider') && parseFloat(getComputedStyle(e).fontSize) < 16)
        .map((e) => e.id || e.textContent.trim().slice(0, 40))`,
    );
    expect([at, smallText]).toEqual([at, []]);
    // A link ("Send a new code", "Use another account") reads as one phrase: when the row has no
    // room for both, the second goes under the first rather than each breaking over two lines.
    const brokenLinks = await page.evaluate<string[]>(
      `[...document.querySelectorAll('main .link')]
        .filter((e) => e.getClientRects().length > 0 && e.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(e).lineHeight))
        .map((e) => e.textContent.trim())`,
    );
    expect([at, 'links over two lines', brokenLinks]).toEqual([at, 'links over two lines', []]);
    const box = await card.boundingBox();
    expect([at, 'card width', box && box.width <= 26 * 16]).toEqual([at, 'card width', true]);
    const [left, right, top] = box ? [box.x, viewport.width - (box.x + box.width), box.y] : [-1, -1, -1];
    expect([at, 'room beside the card', left >= 8 && right >= 8]).toEqual([at, 'room beside the card', true]);
    // Rounded corners belong to a card that floats on the page: none of them touches the screen's edge.
    const rounded = (await page.evaluate<string>("getComputedStyle(document.querySelector('main')).borderTopLeftRadius")) !== '0px';
    expect([at, 'rounded card clear of the top', !rounded || top >= 8]).toEqual([at, 'rounded card clear of the top', true]);
  }
  expect(check.problems).toEqual([]);
}

/**
 * Signing in from a real browser: an app on its own port sends the browser to the authorization
 * endpoint, the person types a user id and the code from the outbox, and the app exchanges the
 * code for tokens. Screenshots of each page go to test-results/ (not committed).
 */
describe('sign-in pages in a real browser', () => {
  let service: TestService;
  let worker: RunningWorker;
  let browser: Browser | undefined;
  let app: TestApp;
  let partnerApp: TestApp;
  let otherEnterpriseApp: TestApp;
  let appClientId = '';
  let nativeClientId = '';

  beforeAll(async () => {
    mkdirSync('test-results', { recursive: true });
    service = await startTestService('signin-e2e', {}, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    app = await startTestApp(service.url);
    const first = await registerClient(service.services.clients, { name: 'Acme Bank', scopes: [], redirectUris: [app.redirectUri] });
    appClientId = first.client.clientId;
    app.useClient({ clientId: appClientId, clientSecret: first.clientSecret as string });
    partnerApp = await startTestApp(service.url);
    const partner = await registerClient(service.services.clients, {
      name: 'Budget Buddy',
      scopes: [],
      redirectUris: [partnerApp.redirectUri],
      firstParty: false,
    });
    partnerApp.useClient({ clientId: partner.client.clientId, clientSecret: partner.clientSecret as string });
    // Another enterprise's app, whose own user `alice` is another person.
    otherEnterpriseApp = await startTestApp(service.url);
    const other = await registerClient(service.services.clients, {
      name: 'Other Bank',
      enterpriseId: 'other-bank',
      scopes: [],
      redirectUris: [otherEnterpriseApp.redirectUri],
    });
    otherEnterpriseApp.useClient({ clientId: other.client.clientId, clientSecret: other.clientSecret as string });
    nativeClientId = (
      await registerClient(service.services.clients, { name: 'Phone app', scopes: [], redirectUris: [NATIVE_REDIRECT], public: true })
    ).client.clientId;
    await insertUser(service.ctx.mongo, { userId: 'alice', enterpriseId: 'other-bank', mobileNumber: '+15550200009' });
    await insertUser(service.ctx.mongo, { userId: 'alice', firstName: 'Alice', lastName: 'Liddell', mobileNumber: '+15550200001' });
    await insertUser(service.ctx.mongo, { userId: 'bob', firstName: 'Bob', lastName: 'Builder', emailId: 'bob@example.com' });
    await insertUser(service.ctx.mongo, { userId: 'newbie', status: 'CREATED', mobileNumber: '+15550200003' });
    await insertUser(service.ctx.mongo, { userId: LONG_USER_ID, mobileNumber: '+15550200004' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app.close();
    await partnerApp.close();
    await otherEnterpriseApp.close();
    await worker.shutdown();
    await service.close();
  });

  /** Each page's CSP reports and requests off the service and its apps, as its listeners saw them. */
  const problems = new WeakMap<Page, string[]>();

  async function newPage(): Promise<Page> {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext();
    const page = await context.newPage();
    const seen: string[] = [];
    problems.set(page, seen);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
    });
    page.on('request', (request) => {
      const url = request.url();
      if (![service.url, app.url, partnerApp.url, otherEnterpriseApp.url].some((origin) => url.startsWith(origin))) seen.push(url);
    });
    page.on('close', () => expect(seen).toEqual([]));
    return page;
  }

  /** expectReadableAtEachWidth with this page's problems. */
  function expectReadable(
    page: Page,
    shot: string,
    firstScreen: (page: Page) => Locator[],
    viewports?: { width: number; height: number }[],
  ) {
    return expectReadableAtEachWidth(page, {
      shot,
      firstScreen,
      problems: problems.get(page) ?? ['a page newPage did not open'],
      ...(viewports ? { viewports } : {}),
    });
  }

  /** The login pages' two steps: the user id, then the code the outbox received for `to`. */
  async function signInOnPages(page: Page, userId: string, to: string): Promise<void> {
    const since = new Date();
    await enterUserId(page, userId);
    await page.getByLabel('Sign-in code').fill(await loginCodeFor(service, to, since));
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function enterUserId(page: Page, userId: string): Promise<void> {
    await page.getByLabel('User ID').fill(userId);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Sign-in code').waitFor();
  }

  test('when a person signs in with a user id and the code from the outbox, then the app gets a code, exchanges it and knows the user', async () => {
    const page = await newPage();
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    const response = await page.goto(`${app.url}/login?scope=openid%20notifications`);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.locator('p.app').innerText()).toContain('Acme Bank');
    await expectReadable(page, 'sign-in-1-user-id', (p) => [
      p.getByRole('heading', { name: 'Sign in', exact: true }),
      p.getByLabel('User ID'),
      p.getByRole('button', { name: 'Continue' }),
    ]);

    const since = new Date();
    await enterUserId(page, 'alice');
    const codeInput = page.getByLabel('Sign-in code');
    expect(await codeInput.getAttribute('name')).toBe('otp');
    expect(await codeInput.getAttribute('autocomplete')).toBe('one-time-code');
    expect(await codeInput.getAttribute('inputmode')).toBe('numeric');
    await expectReadable(page, 'sign-in-2-code', (p) => [
      p.getByRole('heading', { name: 'Enter your code' }),
      p.locator('main > p').filter({ hasText: 'If alice is registered' }),
      p.getByLabel('Sign-in code'),
      p.getByRole('button', { name: 'Sign in', exact: true }),
    ]);

    const code = await loginCodeFor(service, '+15550200001', since);
    const wrong = code === '000000' ? '111111' : '000000';
    await codeInput.fill(wrong);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toBe('That code is not right. 4 attempts left.');
    await expectReadable(page, 'sign-in-3-wrong-code', (p) => [
      p.getByRole('alert'),
      p.getByLabel('Sign-in code'),
      p.getByRole('button', { name: 'Sign in', exact: true }),
    ]);

    await page.getByLabel('Sign-in code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who').waitFor();
    expect(page.url()).toMatch(new RegExp(`^${app.redirectUri}\\?code=`));
    expect(await page.locator('#who').innerText()).toBe('alice');
    expect(app.last.query).toEqual({ code: expect.any(String), state: expect.any(String), iss: `${service.url}/svc/authserver` });
    expect(app.last.tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid notifications', id_token: expect.any(String) });
    await page.screenshot({ path: 'test-results/sign-in-4-app-signed-in.png' });
    expect(cspViolations).toEqual([]);
    await page.close();
  });

  test('when another person signs in on a browser where someone is signed in (prompt=login), then the app gets the new person', async () => {
    const page = await newPage();
    await page.goto(`${app.url}/login?scope=openid%20notifications`);
    await signInOnPages(page, 'alice', '+15550200001');
    await page.locator('#who').waitFor();
    expect(await page.locator('#who').innerText()).toBe('alice');

    await page.goto(`${app.url}/login?scope=openid%20notifications&prompt=login`);
    await signInOnPages(page, 'bob', 'bob@example.com');
    await page.locator('#who').waitFor();
    expect(await page.locator('#who').innerText()).toBe('bob');
    await page.close();
  });

  test("when the app's page signs the person in again silently in a hidden frame (prompt=none), then the browser's own Fetch Metadata lets it through, while the sign-in URL as the page's image stores no sign-in", async () => {
    const page = await newPage();
    await page.goto(`${app.url}/login?scope=openid%20notifications`);
    await signInOnPages(page, 'alice', '+15550200001');
    await page.locator('#who').waitFor();
    const interactions = () => service.ctx.mongo.collection('oidc_records').countDocuments({ kind: 'Interaction' });
    const before = await interactions();

    // Chromium marks this request Sec-Fetch-Dest: iframe; the app's /login redirects it to the authorization endpoint.
    const silent = `${app.url}/login?scope=openid%20notifications&prompt=none`;
    await page.evaluate(
      `(() => { const f = document.createElement('iframe'); f.hidden = true; f.src = ${JSON.stringify(silent)}; document.body.append(f); })()`,
    );
    const framed = page.frameLocator('iframe').locator('#who');
    await framed.waitFor({ state: 'attached', timeout: 10_000 });
    expect(await framed.textContent()).toBe('alice');

    // Chromium marks this one Sec-Fetch-Dest: image: refused before the provider stores an interaction.
    const signInUrl = `${service.url}/svc/authserver/oauth/authorize?${new URLSearchParams({ client_id: appClientId, response_type: 'code', scope: 'openid', redirect_uri: app.redirectUri }).toString()}`;
    const image = await page.evaluate<string>(
      `new Promise((resolve) => { const i = document.createElement('img'); i.onload = () => resolve('loaded'); i.onerror = () => resolve('refused'); i.src = ${JSON.stringify(signInUrl)}; })`,
    );
    expect(image).toBe('refused');
    expect(await interactions()).toBe(before);
    await page.close();
  });

  test("when alice of one enterprise is signed in and another enterprise's app is opened, then it asks for sign-in and gets its own alice", async () => {
    const page = await newPage();
    await page.goto(`${app.url}/login?scope=openid%20notifications`);
    await signInOnPages(page, 'alice', '+15550200001');
    await page.locator('#who').waitFor();

    // The session belongs to the first enterprise: the other app gets the login page, not a code.
    await page.goto(`${otherEnterpriseApp.url}/login?scope=openid%20notifications`);
    expect(await page.locator('p.app').innerText()).toContain('Other Bank');
    await signInOnPages(page, 'alice', '+15550200009');
    await page.locator('#who').waitFor();
    expect(page.url()).toMatch(new RegExp(`^${otherEnterpriseApp.redirectUri}\\?code=`));
    expect(await page.locator('#who').innerText()).toBe('alice');
    await page.close();
  });

  test('when the signed-in person signs out, then the sign-out page ends the session, returns to the app, and the next sign-in shows the login page', async () => {
    const page = await newPage();
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    await page.goto(`${app.url}/login`);
    await signInOnPages(page, 'alice', '+15550200001');
    await page.locator('#who').waitFor();

    const params = new URLSearchParams({ client_id: appClientId, post_logout_redirect_uri: app.redirectUri, state: 'bye' });
    await page.goto(`${service.url}/svc/authserver/session/end?${params.toString()}`);
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Acme Bank asks to sign you out.');
    expect(await page.locator('main').innerText()).not.toContain('Signing in to');
    await expectReadable(page, 'sign-out-1-confirm', (p) => [
      p.getByRole('heading', { name: 'Sign out?' }),
      p.locator('main > p').filter({ hasText: 'Acme Bank asks to sign you out.' }),
      p.getByRole('button', { name: 'Sign out' }),
    ]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${app.redirectUri}?state=bye`));

    await page.goto(`${app.url}/login`);
    await page.getByLabel('User ID').waitFor();
    expect(cspViolations).toEqual([]);
    await page.close();
  });

  test('when a native app with a private-use scheme signs a person in, then the browser hands the code to the app (the pages let their last form end at its scheme), and signing out returns there too', async () => {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext();
    const cspViolations: string[] = [];
    // The browser's last hop: its request for the app's scheme, which the system hands to the app
    // (here no app is installed, so the browser then gives up on it).
    const toApp: string[] = [];
    const watchedPage = async () => {
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      page.on('request', (request) => {
        if (request.url().startsWith(NATIVE_REDIRECT)) toApp.push(request.url());
      });
      return page;
    };
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: nativeClientId,
      response_type: 'code',
      scope: 'openid notifications',
      redirect_uri: NATIVE_REDIRECT,
      state: 'st-phone',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const signIn = await watchedPage();
    await signIn.goto(`${service.url}/svc/authserver/oauth/authorize?${params.toString()}`);
    await signInOnPages(signIn, 'alice', '+15550200001');
    await eventually(async () => (toApp.length > 0 ? true : undefined));
    const callback = new URL(toApp[0] as string);
    expect(callback.searchParams.get('state')).toBe('st-phone');
    const token = await fetch(`${service.url}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: nativeClientId,
        code: callback.searchParams.get('code') ?? '',
        redirect_uri: NATIVE_REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    expect(token.status).toBe(200);

    // In a page of its own: the one that went to the app may still be handing that over.
    const signOut = await watchedPage();
    const query = new URLSearchParams({ client_id: nativeClientId, post_logout_redirect_uri: NATIVE_REDIRECT, state: 'bye' });
    await signOut.goto(`${service.url}/svc/authserver/session/end?${query.toString()}`);
    await signOut.getByRole('button', { name: 'Sign out' }).click();
    await eventually(async () => (toApp.includes(`${NATIVE_REDIRECT}?state=bye`) ? true : undefined));
    expect(cspViolations).toEqual([]);
    await context.close();
  });

  test('when the user has no mobile number, then the code goes by e-mail and "send a new code" replaces it', async () => {
    const page = await newPage();
    await page.goto(`${app.url}/login`);
    const since = new Date();
    await enterUserId(page, 'bob');
    const first = await loginCodeFor(service, 'bob@example.com', since);
    await page.getByRole('button', { name: 'Send a new code' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').innerText()).toContain('A new code is on its way');
    await expectReadable(page, 'sign-in-5-new-code', (p) => [
      p.getByRole('status'),
      p.getByLabel('Sign-in code'),
      p.getByRole('button', { name: 'Sign in', exact: true }),
    ]);
    const second = await eventually(async () => {
      const mails = (await readOutbox(service, 'bob@example.com')).filter((m) => /sign-in code/.test(m.text));
      if (mails.length < 2) return undefined;
      return /\b(\d{6})\b/.exec(mails.sort((a, b) => a.createdAt.localeCompare(b.createdAt))[mails.length - 1]?.text ?? '')?.[1] as string;
    });
    if (first !== second) {
      await page.getByLabel('Sign-in code').fill(first);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      // The earlier code no longer works: it is checked against the new one.
      expect(await page.getByRole('alert').innerText()).toBe('That code is not right. 4 attempts left.');
    }
    await page.getByLabel('Sign-in code').fill(second);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who').waitFor();
    expect(await page.locator('#who').innerText()).toBe('bob');
    await page.close();
  });

  test('when a third-party app asks, then the consent page lists the scopes and Allow finishes the sign-in', async () => {
    const page = await newPage();
    await page.goto(`${partnerApp.url}/login?scope=openid%20notifications`);
    await signInOnPages(page, 'alice', '+15550200001');
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toContain('Budget Buddy');
    expect(text).toContain('Read and answer your notifications');
    await expectReadable(page, 'sign-in-6-consent', (p) => [
      p.getByRole('heading', { name: 'Allow access?' }),
      p.locator('main > p').filter({ hasText: 'Budget Buddy asks to act for alice' }),
      p.locator('ul.scopes'),
      p.getByRole('button', { name: 'Allow' }),
    ]);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.locator('#who').waitFor();
    expect(await page.locator('#who').innerText()).toBe('alice');
    await page.close();
  });

  test('when the browser prefers a light or a dark scheme, then all text on the user-id and code pages, small print included, reaches 4.5:1 contrast against the card', async () => {
    /** WCAG 2 relative luminance of a computed `rgb(...)` colour. */
    const luminance = (css: string) => {
      const [r = 0, g = 0, b = 0] = (css.match(/[0-9.]+/g) ?? []).slice(0, 3).map((c) => {
        const v = Number(c) / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    /** Each visible text element's contrast against the card, lowest first. */
    const contrasts = async (page: Page) => {
      // Run in the page as text: the test's TypeScript has no DOM types.
      const { card, texts } = await page.evaluate<{ card: string; texts: { text: string; color: string }[] }>(`(() => {
        const main = document.querySelector('main');
        const texts = [...main.querySelectorAll('h1, p, label, .app, .hint, .divider')]
          .filter((el) => el.offsetParent !== null && el.textContent.trim())
          .map((el) => ({ text: el.textContent.trim().slice(0, 30), color: getComputedStyle(el).color }));
        return { card: getComputedStyle(main).backgroundColor, texts };
      })()`);
      const background = luminance(card);
      return texts
        .map(({ text, color }) => {
          const fore = luminance(color);
          const ratio = (Math.max(fore, background) + 0.05) / (Math.min(fore, background) + 0.05);
          return { text, ratio: Math.round(ratio * 100) / 100 };
        })
        .sort((x, y) => x.ratio - y.ratio);
    };
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await newPage();
      await page.emulateMedia({ colorScheme });
      await page.goto(`${app.url}/login`);
      await page.getByLabel('User ID').waitFor();
      const onUserIdPage = await contrasts(page);
      await enterUserId(page, 'alice');
      const onCodePage = await contrasts(page);
      // For a person to look at: the card on a phone in each scheme (its margin, corners, shadow).
      await page.setViewportSize(PHONE);
      await page.screenshot({ path: `test-results/sign-in-14-code-${colorScheme}-390.png` });
      expect(onUserIdPage.length).toBeGreaterThan(1);
      expect(onCodePage.length).toBeGreaterThan(1);
      expect(
        [...onUserIdPage, ...onCodePage].filter((element) => element.ratio < 4.5).map((element) => ({ colorScheme, ...element })),
      ).toEqual([]);
      await page.close();
    }
  });

  test('when the user is not activated yet, then the right code leads to "activate first" and the app gets nothing', async () => {
    const page = await newPage();
    await page.goto(`${app.url}/login`);
    await signInOnPages(page, 'newbie', '+15550200003');
    await page.getByRole('heading', { name: 'Activate your account first' }).waitFor();
    expect(page.url()).toMatch(/\/svc\/authserver\/interaction\//);
    await expectReadable(page, 'sign-in-7-not-active', (p) => [
      p.getByRole('heading', { name: 'Activate your account first' }),
      p.locator('main > p').filter({ hasText: 'Your account is not active yet.' }),
      p.getByRole('button', { name: 'Use another account' }),
    ]);
    await page.close();
  });

  test('when the redirect URI is not registered or the app is unknown, then an error page is shown and the browser stays on the service', async () => {
    const page = await newPage();
    const response = await page.goto(
      `${service.url}/svc/authserver/oauth/authorize?client_id=${appClientId}&response_type=code&scope=openid&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    );
    expect(response?.status()).toBe(400);
    expect(page.url().startsWith(service.url)).toBe(true);
    expect(await page.locator('h1').innerText()).toBe('Sign-in error');
    const errorPage = (p: Page) => [
      p.getByRole('heading', { name: 'Sign-in error' }),
      p.locator('main > p').filter({ hasText: '(invalid_' }),
    ];
    await expectReadable(page, 'sign-in-8-error-page', errorPage);

    // An app the service does not know gets the same page, never a redirect.
    const unknownApp = await page.goto(
      `${service.url}/svc/authserver/oauth/authorize?client_id=no-such-app&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(app.redirectUri)}`,
    );
    expect(unknownApp?.status()).toBe(400);
    expect(page.url().startsWith(service.url)).toBe(true);
    expect(await page.locator('main').innerText()).toContain('invalid_client');
    await expectReadable(page, 'sign-in-8-error-page-unknown-app', errorPage);
    await page.close();
  });

  test('when a sign-in page has expired or its form is stale, then each answer is a page that fits and reads at 1280 and 390 px', async () => {
    const page = await newPage();
    const expired = await page.goto(`${service.url}/svc/authserver/interaction/no-such-sign-in`);
    expect(expired?.status()).toBe(400);
    await expectReadable(page, 'sign-in-10-expired', (p) => [
      p.getByRole('heading', { name: 'This sign-in has expired' }),
      p.locator('main > p').filter({ hasText: 'This sign-in page has expired' }),
    ]);

    await page.goto(`${app.url}/login`);
    await page.getByLabel('User ID').fill('alice');
    // A form whose security token is no longer the sign-in's (another tab started over, say).
    await page.evaluate(`document.querySelector('input[name=csrf]').value = 'stale'`);
    const [stale] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
    expect(stale.status()).toBe(403);
    await expectReadable(page, 'sign-in-11-stale-form', (p) => [
      p.getByRole('heading', { name: 'Please try again' }),
      p.locator('main > p').filter({ hasText: 'This form could not be accepted' }),
    ]);
    await page.close();
  });

  test('when the user id is as long as user ids come, with nowhere to break, then the code and consent pages that name it keep it inside the card', async () => {
    const page = await newPage();
    await page.goto(`${partnerApp.url}/login?scope=openid%20notifications`);
    const since = new Date();
    await enterUserId(page, LONG_USER_ID);
    const named = (p: Page) => p.locator('main > p').filter({ hasText: LONG_USER_ID });
    await expectReadable(page, 'sign-in-12-long-user-id-code', (p) => [
      p.getByRole('heading', { name: 'Enter your code' }),
      named(p),
      p.getByLabel('Sign-in code'),
      p.getByRole('button', { name: 'Sign in', exact: true }),
    ]);
    await page.getByLabel('Sign-in code').fill(await loginCodeFor(service, '+15550200004', since));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await expectReadable(page, 'sign-in-12-long-user-id-consent', (p) => [
      p.getByRole('heading', { name: 'Allow access?' }),
      named(p),
      p.getByRole('button', { name: 'Allow' }),
    ]);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.locator('#who').waitFor();
    expect(await page.locator('#who').innerText()).toBe(LONG_USER_ID);
    await page.close();
  });

  test('when the app asks for German (ui_locales=de), the language of the longest words, then on a phone the user-id, code, consent and error pages wrap or fit every word', async () => {
    const page = await newPage();
    await page.goto(`${partnerApp.url}/login?scope=openid%20notifications&ui_locales=de`);
    await expectReadable(
      page,
      'sign-in-13-de-user-id',
      (p) => [
        p.getByRole('heading', { name: 'Anmelden', exact: true }),
        p.getByLabel('Benutzer-ID'),
        p.getByRole('button', { name: 'Weiter' }),
      ],
      [PHONE],
    );
    const since = new Date();
    await page.getByLabel('Benutzer-ID').fill('alice');
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.getByLabel('Anmeldecode').waitFor();
    await expectReadable(
      page,
      'sign-in-13-de-code',
      (p) => [
        p.getByRole('heading', { name: 'Code eingeben' }),
        p.locator('main > p').filter({ hasText: 'Falls alice registriert ist' }),
        p.getByLabel('Anmeldecode'),
        p.getByRole('button', { name: 'Anmelden', exact: true }),
      ],
      [PHONE],
    );
    await page.getByLabel('Anmeldecode').fill(await loginCodeFor(service, '+15550200001', since, /Anmeldecode/));
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await page.getByRole('button', { name: 'Erlauben' }).waitFor();
    await expectReadable(
      page,
      'sign-in-13-de-consent',
      (p) => [
        p.getByRole('heading', { name: 'Zugriff erlauben?' }),
        p.locator('main > p').filter({ hasText: 'Budget Buddy möchte' }),
        p.locator('ul.scopes'),
        p.getByRole('button', { name: 'Erlauben' }),
      ],
      [PHONE],
    );
    await page.getByRole('button', { name: 'Erlauben' }).click();
    await page.locator('#who').waitFor();

    const query = new URLSearchParams({
      client_id: appClientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'https://evil.example/cb',
      ui_locales: 'de',
    });
    const refused = await page.goto(`${service.url}/svc/authserver/oauth/authorize?${query.toString()}`);
    expect(refused?.status()).toBe(400);
    await expectReadable(
      page,
      'sign-in-13-de-error-page',
      (p) => [p.getByRole('heading', { name: 'Anmeldefehler' }), p.locator('main > p').filter({ hasText: '(invalid_redirect_uri' })],
      [PHONE],
    );
    await page.close();
  });
});

/**
 * The page an address gets once its budget of sign-ins started and sign-in pages loaded is spent
 * (RATE_LIMIT_SIGN_IN_STARTS_PER_IP, here 1): the sign-in page the first authorization request
 * leads to is refused by the sign-in pages, and the next authorization request by the
 * authorization server itself. Both are looked at on a desktop and on a phone. A service of its
 * own, so the other tests' sign-ins keep the default budget.
 */
describe('the sign-in 429 page in a real browser', () => {
  const REDIRECT = 'https://app.example/callback';
  let service: TestService;
  let browser: Browser | undefined;
  let authorizeUrl = '';

  beforeAll(async () => {
    mkdirSync('test-results', { recursive: true });
    service = await startTestService('signin-e2e-429', { RATE_LIMIT_SIGN_IN_STARTS_PER_IP: '1' }, { ownPublicUrl: true });
    const { clientId } = (await registerClient(service.services.clients, { name: 'Acme Bank', scopes: [], redirectUris: [REDIRECT] }))
      .client;
    const query = new URLSearchParams({ client_id: clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' });
    authorizeUrl = `${service.url}/svc/authserver/oauth/authorize?${query.toString()}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service.close();
  });

  /**
   * The 429 page's own words, not the stale form's "Please try again" nor the code's "Too many
   * attempts": what happened (too many sign-in requests from this network or device), the wait
   * (the Retry-After value, in the language's plural form) and that the account is fine.
   */
  const WORDS = {
    en: {
      heading: 'Too many sign-in requests',
      message:
        /^Too many sign-in requests came from your network or device\. Wait (\d+) seconds?, then try again\. Nothing is wrong with your account\.$/,
    },
    de: {
      heading: 'Zu viele Anmeldeanfragen',
      message:
        /^Von Ihrem Netzwerk oder Gerät kamen zu viele Anmeldeanfragen\. Warten Sie (\d+) Sekunden? und versuchen Sie es dann erneut\. Mit Ihrem Konto ist alles in Ordnung\.$/,
    },
  };

  /** The page is the 429 page in this language, and the wait it says is the Retry-After value. */
  async function expectTooManyPage(page: Page, response: Response | null, language: keyof typeof WORDS): Promise<void> {
    expect(response?.status()).toBe(429);
    const retryAfter = Number(response?.headers()['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(await page.locator('h1').innerText()).toBe(WORDS[language].heading);
    const message = await page.locator('main > p').innerText();
    expect(message).toMatch(WORDS[language].message);
    expect(Number(WORDS[language].message.exec(message)?.[1])).toBe(retryAfter);
  }

  test('when an address has spent its budget of sign-ins started, then both 429 pages (sign-in page, authorization request) say so in their own words, in English and German, and fit and read at 1280 and 390 px', async () => {
    if (!browser) throw new Error('no browser');
    const problems: string[] = [];
    const watch = (page: Page) => {
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) problems.push(message.text());
      });
      page.on('request', (request) => {
        if (!request.url().startsWith(service.url)) problems.push(request.url());
      });
      return page;
    };
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = watch(await context.newPage());
    const refusal = (language: keyof typeof WORDS) => (p: Page) => [
      p.getByRole('heading', { name: WORDS[language].heading }),
      p.locator('main > p').filter({ hasText: WORDS[language].message }),
    ];

    // The authorization request spends the budget of 1; the sign-in page it leads to is refused.
    const pageLoad = await page.goto(authorizeUrl);
    const signInPage = page.url();
    expect(signInPage).toContain('/svc/authserver/interaction/');
    await expectTooManyPage(page, pageLoad, 'en');
    await expectReadableAtEachWidth(page, { shot: 'sign-in-9-too-many-page', firstScreen: refusal('en'), problems });

    const authorization = await page.goto(authorizeUrl);
    expect(page.url()).toBe(authorizeUrl);
    await expectTooManyPage(page, authorization, 'en');
    await expectReadableAtEachWidth(page, { shot: 'sign-in-9-too-many-authorize', firstScreen: refusal('en'), problems });

    // A browser asking German gets both pages in German (its Accept-Language: neither page has read the app's ui_locales yet).
    const german = await browser.newContext({ viewport: PHONE, locale: 'de-DE' });
    const inGerman = watch(await german.newPage());
    await expectTooManyPage(inGerman, await inGerman.goto(signInPage), 'de');
    await expectReadableAtEachWidth(inGerman, {
      shot: 'sign-in-9-too-many-page-de',
      firstScreen: refusal('de'),
      problems,
      viewports: [PHONE],
    });
    await expectTooManyPage(inGerman, await inGerman.goto(authorizeUrl), 'de');
    await expectReadableAtEachWidth(inGerman, {
      shot: 'sign-in-9-too-many-authorize-de',
      firstScreen: refusal('de'),
      problems,
      viewports: [PHONE],
    });

    await german.close();
    await context.close();
  });
});
