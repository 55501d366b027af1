import type { Browser, Page } from 'playwright-core';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { startEnrollmentWorker } from '../../workers/enrollment/enrollment-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { launchBrowser } from '../support/browser.js';
import { notificationBody } from '../support/notification-helpers.js';
import { eventually, readOutbox } from '../support/otp-helpers.js';
import { controlsCoveredBy } from '../support/page-layout.js';
import { loginCodeFor } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const USER_ID = 'approver1';
const EMAIL = `${USER_ID}@example.com`;
const ACTIVATION_CODE = 'APPROVE-ME-1';
const NUMBER_LABEL = 'Number shown by the app asking for approval';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** The approver example app in Debian's Chromium, driven as a person would use it. */
describe('approver app in a real browser', () => {
  let service: TestService;
  let dispatch: RunningWorker;
  let enrollment: RunningWorker;
  let browser: Browser | undefined;
  let enterprise: string;
  // The page of the first test, signed in, for the next ones.
  let signedIn: Page | undefined;

  beforeAll(async () => {
    // PUBLIC_URL is the address the browser uses: the app's redirect URI is built from it.
    service = await startTestService('approverapp', { DEMO_APPROVER: 'on' }, { ownPublicUrl: true });
    dispatch = await startDispatchWorker(service.config, memoryLogger().logger);
    enrollment = await startEnrollmentWorker(service.config, memoryLogger().logger);
    await createGroups(service, ['retail']);
    enterprise = (await createClientWithToken(service, { scopes: ['users', 'notifications'] })).accessToken;
    const enrolled = await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody(USER_ID, { predefinedCode: ACTIVATION_CODE }));
    expect(enrolled.status).toBe(201);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await enrollment.shutdown();
    await dispatch.shutdown();
    await service.close();
  });

  /** Errors the page reports, including Content-Security-Policy refusals. */
  function watch(page: Page): string[] {
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.text().includes('Content Security Policy'))
        errors.push(`${message.text()} ${message.location().url}`);
    });
    return errors;
  }

  /** The same screen at desktop and phone width (looked at by a person: test-results/). */
  async function screenshots(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: `test-results/approver-${name}-1280.png`, fullPage: true });
    // A status message never hides a control, wherever the page is scrolled.
    const messages = page.locator('[role="status"]:not(:empty)');
    expect(await controlsCoveredBy(page, messages)).toEqual([]);
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: `test-results/approver-${name}-390.png`, fullPage: true });
    // Nothing sticks out sideways on a phone.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    expect(await controlsCoveredBy(page, messages)).toEqual([]);
    await page.setViewportSize(DESKTOP);
  }

  const enterpriseView = async (uuid: string) =>
    (await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } })).json();

  async function createNotification(overrides: Record<string, unknown>): Promise<{ notification_uuid: string; number?: string }> {
    const create = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(USER_ID, overrides));
    expect(create.status).toBe(201);
    return (await create.json()) as { notification_uuid: string; number?: string };
  }

  test('when a person activates the browser, signs in, and accepts a signed approval, then the enterprise sees it UPDATED and Verified', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage({ viewport: DESKTOP });
    page.setDefaultTimeout(15000);
    const errors = watch(page);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${service.url}/demo/approver`);
    expect(new URL(page.url()).pathname).toBe('/demo/approver/');
    await page.getByLabel('User id').fill(USER_ID);
    await page.getByLabel('Activation code').fill(ACTIVATION_CODE);
    await screenshots(page, 'start');
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `This device is activated for ${USER_ID}. Verification key: ` })
      .waitFor();
    // The activation card is gone once the device is activated, and stays gone after a reload.
    expect(await page.locator('#activate-section').isHidden()).toBe(true);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The Sign in button is in the page itself; this one shows once the app's script has run.
    await page.getByRole('button', { name: 'Activate this device for another account' }).waitFor();
    expect(await page.locator('#activate-section').isHidden()).toBe(true);

    // The login pages of the authorization server, then back to the app with the code.
    const since = new Date();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('input[name="userId"]').fill(USER_ID);
    await page.locator('form button[type="submit"]').click();
    await page.locator('input[name="otp"]').fill(await loginCodeFor(service, EMAIL, since));
    await page.locator('form button[type="submit"]').first().click();
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    expect(new URL(page.url()).search).toBe('');
    // Web Push: the service worker that shows alerts is installed for the app, and alerts are offered.
    await page.getByRole('button', { name: 'Alert me on this device' }).waitFor();
    const scope = await page.evaluate<string | undefined>('navigator.serviceWorker.getRegistration().then((r) => r?.scope)');
    expect(scope).toBe(`${new URL(page.url()).origin}/demo/approver/`);

    const { notification_uuid: uuid } = await createNotification({ ds_required: true });
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator('#pending-list li', { hasText: 'Login request' });
    await card.waitFor();
    expect(await card.innerText()).toContain('Approve the login from Chrome on Linux?');
    expect(await card.innerText()).toContain('signed with this device');
    await screenshots(page, 'pending');

    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'signature verified' }).waitFor();
    await page.locator('#history-rows tr', { hasText: 'Verified' }).waitFor();
    await screenshots(page, 'history');

    expect(await enterpriseView(uuid)).toMatchObject({
      status: 'UPDATED',
      action: 'accept',
      signing_status: 'Verified',
      is_ds_verified: true,
    });
    expect(errors).toEqual([]);
    // Everything the page loaded came from the service itself.
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
    signedIn = page;
  }, 120000);

  test('when a new approval is created while the app is open, then it appears without Refresh, and leaves when the enterprise cancels it', async () => {
    if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
    const page = signedIn;
    const { notification_uuid: uuid } = await createNotification({
      body: [{ lng: 'English', subject: 'Wire transfer', message: 'Approve sending 250 EUR to ACME Ltd?' }],
    });
    const card = page.locator('#pending-list li', { hasText: 'Wire transfer' });
    await card.waitFor();
    await page.screenshot({ path: 'test-results/approver-live-1280.png', fullPage: true });
    if (process.env.UPDATE_DOC_IMAGES === '1') await page.screenshot({ path: 'docs/images/approver-live-approval.png' });
    const cancelled = await sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', enterprise, {});
    expect(cancelled.status).toBe(200);
    await card.waitFor({ state: 'detached' });
  });

  test('when the person dismisses an approval, then it leaves the list without an answer and the enterprise sees it DISMISSED', async () => {
    if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
    const page = signedIn;
    const { notification_uuid: uuid } = await createNotification({
      body: [{ lng: 'English', subject: 'Unexpected sign-in', message: 'Was this you signing in from Lisbon?' }],
    });
    const card = page.locator('#pending-list li', { hasText: 'Unexpected sign-in' });
    await card.getByRole('button', { name: 'Dismiss without answering' }).click();
    await card.waitFor({ state: 'detached' });
    await page.getByText('Request dismissed.').waitFor();
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'DISMISSED' });
  });

  test('when a notification asks for number matching, then a wrong number tells the tries left and keeps what was typed, and the right one approves', async () => {
    if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
    const page = signedIn;
    const { notification_uuid: uuid, number } = await createNotification({
      numberMatch: true,
      body: [{ lng: 'English', subject: 'Payment approval', message: 'Approve the transfer of 120 EUR?' }],
    });
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator('#pending-list li', { hasText: 'Payment approval' });
    await card.getByLabel(NUMBER_LABEL).waitFor();
    const wrong = number === '00' ? '01' : '00';
    await card.getByLabel(NUMBER_LABEL).fill(wrong);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page
      .locator('#status.error', { hasText: 'That is not the number shown by the app asking for approval. 2 tries left.' })
      .waitFor()
      .catch(async (err: Error) => {
        // What the app said instead, for the log of a run that did not see the message.
        const status = page.locator('#status');
        throw new Error(`${err.message}\n#status (${await status.getAttribute('class')}): ${await status.innerText()}`, { cause: err });
      });
    // The list was drawn again; the number the person typed is still there to correct.
    await page.locator('#pending-list li', { hasText: 'Payment approval' }).waitFor();
    expect(await page.locator('#pending-list li', { hasText: 'Payment approval' }).getByLabel(NUMBER_LABEL).inputValue()).toBe(wrong);
    await screenshots(page, 'number-wrong');
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'ACTIVE' });

    await page
      .locator('#pending-list li', { hasText: 'Payment approval' })
      .getByLabel(NUMBER_LABEL)
      .fill(number as string);
    await page.locator('#pending-list li', { hasText: 'Payment approval' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('#pending-list li', { hasText: 'Payment approval' }).waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'Answer sent' }).waitFor();
    expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action: 'accept' });
  }, 60000);

  test.each([
    ['Reject', 'reject'],
    ['Report fraud', 'fraud'],
  ])(
    'when a person who did not ask gets a number-matching request, then %s works without any number',
    async (label, action) => {
      if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
      const page = signedIn;
      const subject = `Unexpected sign-in ${action}`;
      const { notification_uuid: uuid } = await createNotification({
        numberMatch: true,
        body: [{ lng: 'English', subject, message: 'Someone is signing in as you.' }],
      });
      await page.getByRole('button', { name: 'Refresh' }).click();
      const card = page.locator('#pending-list li', { hasText: subject });
      await card.getByLabel(NUMBER_LABEL).waitFor();
      expect(await card.getByLabel(NUMBER_LABEL).inputValue()).toBe('');
      await card.getByRole('button', { name: label }).click();
      // Answered, then drawn again without it (the status line may still show an earlier answer).
      await card.waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: 'Answer sent' }).waitFor();
      expect(await enterpriseView(uuid)).toMatchObject({ status: 'UPDATED', action });
    },
    60000,
  );

  /** The other device's answer, or the enterprise's cancel, that lands between the tap on Approve and its request reaching the service. */
  const endedMeanwhile: [string, string, (uuid: string, accessToken: string) => Promise<Response>, string, Record<string, unknown>][] = [
    [
      'the person rejected it on another device',
      'Answered elsewhere',
      (uuid, accessToken) => sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', accessToken, { response: 'reject' }),
      'This request was already answered on another device (rejected).',
      { status: 'UPDATED', action: 'reject' },
    ],
    [
      'the enterprise cancelled it',
      'Cancelled meanwhile',
      (uuid) => sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', enterprise, {}),
      'This request is no longer waiting for an answer.',
      { status: 'CANCELLED' },
    ],
  ];

  test.each(endedMeanwhile)(
    'when %s just before the answer here, then the app says so in those words',
    async (_, subject, endElsewhere, message, stored) => {
      if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
      const page = signedIn;
      const { notification_uuid: uuid } = await createNotification({ body: [{ lng: 'English', subject, message: 'Approve the login?' }] });
      await page.getByRole('button', { name: 'Refresh' }).click();
      const card = page.locator('#pending-list li', { hasText: subject });
      await card.getByRole('button', { name: 'Approve' }).waitFor();
      const tokens = JSON.parse((await page.evaluate<string | null>("sessionStorage.getItem('tokens')")) ?? '{}') as {
        accessToken: string;
      };
      // The race, made certain: the other end reaches the service first, then the app's own request goes on unchanged,
      // and the service's real 409 comes back to it.
      const ended: number[] = [];
      const actionUrl = `${service.url}/v1/me/notifications/${uuid}/action`;
      await page.route(actionUrl, async (route) => {
        ended.push((await endElsewhere(uuid, tokens.accessToken)).status);
        await route.continue();
      });
      try {
        await card.getByRole('button', { name: 'Approve' }).click();
        await page.locator('#status.error', { hasText: message }).waitFor();
      } finally {
        await page.unroute(actionUrl);
      }
      expect(ended).toEqual([200]);
      expect(await enterpriseView(uuid)).toMatchObject(stored);
    },
    60000,
  );

  test('when the person signs out, then the tokens are revoked and forgotten, the session ends, and the next Sign in asks who it is', async () => {
    if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
    const page = signedIn;
    const errors = watch(page);
    const stored = await page.evaluate<string | null>("sessionStorage.getItem('tokens')");
    const tokens = JSON.parse(stored ?? '{}') as { accessToken: string; refreshToken: string };
    expect(tokens.refreshToken).toEqual(expect.any(String));

    await page.locator('#signout-button').click();
    // The service's logout page asks once, then comes back to the app.
    await page.waitForURL((url) => url.pathname.startsWith('/svc/authserver/session/end'));
    await page.screenshot({ path: 'test-results/approver-logout-page-1280.png' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${service.url}/demo/approver/`);
    await page.getByText('Not signed in').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<string | null>("sessionStorage.getItem('tokens')")).toBeNull();
    expect(await page.locator('#pending-section').isHidden()).toBe(true);
    await screenshots(page, 'signed-out');

    // Both tokens are dead at the service, not just forgotten.
    expect((await fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })).status).toBe(401);
    const refresh = await fetch(`${service.url}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'approver-demo', refresh_token: tokens.refreshToken }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });

    // The next person on this device is asked who they are.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('input[name="userId"]').waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/svc\/authserver\/interaction\//);
    expect(errors).toEqual([]);
    await page.close();
  }, 60000);

  test('when a person of another enterprise opens the link of their activation message, then the app is filled in and activates them there', async () => {
    if (!browser) throw new Error('no browser');
    const acme = (await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'acme' })).accessToken;
    const email = 'walt@acme.example';
    expect((await sendJson(`${service.url}/v1/users`, 'POST', acme, userBody('walt', { emailId: email }))).status).toBe(201);
    const message = await eventually(async () => (await readOutbox(service, email)).find((m) => m.subject === 'Activate your account'));
    const link = /Open this link on the phone: (\S+)/.exec(message.text)?.[1] as string;
    const verificationKey = /It must be ([A-Z0-9]+)\./.exec(message.text)?.[1] as string;
    expect(link).toMatch(new RegExp(`^${service.url}/demo/approver/#enterprise=acme&user=walt&code=[A-Z0-9]{8}$`));

    // A fresh device (own profile), as a person opening the link on their phone.
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const errors = watch(page);
    await page.goto(link);
    await page.getByRole('status').filter({ hasText: 'Check the details from your activation message' }).waitFor();
    expect(await page.getByLabel('Organization').inputValue()).toBe('acme');
    expect(await page.getByLabel('User id').inputValue()).toBe('walt');
    // A device never activated offers no "another account" link.
    expect(await page.getByRole('button', { name: 'Activate this device for another account' }).isHidden()).toBe(true);
    // The code left the address bar at once.
    expect(new URL(page.url()).hash).toBe('');
    await page.screenshot({ path: 'test-results/approver-activation-link-390.png', fullPage: true });
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `This device is activated for walt. Verification key: ${verificationKey}.` })
      .waitFor();
    const user = await fetch(`${service.url}/v1/users/walt`, { headers: { authorization: `Bearer ${acme}` } });
    expect(await user.json()).toMatchObject({ userId: 'walt', status: 'ACTIVE', device: { deviceId: expect.stringMatching(/^browser-/) } });
    expect(errors).toEqual([]);
    await context.close();
  }, 60000);

  test('when the app is opened at localhost while the service is published at 127.0.0.1, then it moves to its one origin and works there', async () => {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const errors = watch(page);
    const other = service.url.replace('127.0.0.1', 'localhost');
    await page.goto(`${other}/demo/approver/#enterprise=default&user=someone&code=ABCDEFGH`);
    await page.waitForURL((url) => url.origin === service.url);
    await page.getByRole('status').filter({ hasText: 'Check the details from your activation message' }).waitFor();
    expect(await page.getByLabel('User id').inputValue()).toBe('someone');
    expect(errors).toEqual([]);
    await context.close();
  }, 60000);
});
