import type { Browser, Page } from 'playwright-core';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { launchBrowser } from '../support/browser.js';
import { notificationBody } from '../support/notification-helpers.js';
import { loginCodeFor } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, userBody } from '../support/users-helpers.js';

const USER_ID = 'approver1';
const EMAIL = `${USER_ID}@example.com`;
const ACTIVATION_CODE = 'APPROVE-ME-1';

/** The approver example app in Debian's Chromium, driven as a person would use it. */
describe('approver app in a real browser', () => {
  let service: TestService;
  let worker: RunningWorker;
  let browser: Browser | undefined;
  let enterprise: string;
  // The page of the first test, signed in, for the next one.
  let signedIn: Page | undefined;

  beforeAll(async () => {
    // PUBLIC_URL is the address the browser uses: the app's redirect URI is built from it.
    service = await startTestService('approverapp', { DEMO_APPROVER: 'on' }, { ownPublicUrl: true });
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    await createGroups(service, ['retail']);
    enterprise = (await createClientWithToken(service, { scopes: ['users', 'notifications'] })).accessToken;
    const enrolled = await sendJson(`${service.url}/v1/users`, 'POST', enterprise, userBody(USER_ID, { predefinedCode: ACTIVATION_CODE }));
    expect(enrolled.status).toBe(201);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker.shutdown();
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

  test('when a person activates the browser, signs in, and accepts a signed approval, then the enterprise sees it UPDATED and Verified', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    page.setDefaultTimeout(15000);
    const errors = watch(page);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${service.url}/demo/approver`);
    expect(new URL(page.url()).pathname).toBe('/demo/approver/');
    await page.getByLabel('User id').fill(USER_ID);
    await page.getByLabel('Activation code').fill(ACTIVATION_CODE);
    await page.getByRole('button', { name: 'Activate' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Device activated for ${USER_ID}` })
      .waitFor();
    await page.screenshot({ path: 'test-results/approver-activated.png' });

    // The login pages of the authorization server, then back to the app with the code.
    const since = new Date();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('input[name="userId"]').fill(USER_ID);
    await page.locator('form button[type="submit"]').click();
    await page.locator('input[name="otp"]').fill(await loginCodeFor(service, EMAIL, since));
    await page.screenshot({ path: 'test-results/approver-login-code.png' });
    await page.locator('form button[type="submit"]').first().click();
    await page.getByText(`Signed in as ${USER_ID}`).waitFor();
    expect(new URL(page.url()).search).toBe('');

    const create = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(USER_ID, { ds_required: true }));
    expect(create.status).toBe(201);
    const { notification_uuid: uuid } = (await create.json()) as { notification_uuid: string };
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator('#pending-list li', { hasText: 'Login request' });
    await card.waitFor();
    expect(await card.innerText()).toContain('Approve the login from Chrome on Linux?');
    expect(await card.innerText()).toContain('signed with this device');
    await page.screenshot({ path: 'test-results/approver-pending.png' });

    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'signature verified' }).waitFor();
    await page.locator('#history-rows tr', { hasText: 'Verified' }).waitFor();
    await page.screenshot({ path: 'test-results/approver-history.png', fullPage: true });

    const read = await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } });
    expect(await read.json()).toMatchObject({ status: 'UPDATED', action: 'accept', signing_status: 'Verified', is_ds_verified: true });
    expect(errors).toEqual([]);
    // Everything the page loaded came from the service itself.
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
    signedIn = page;
  }, 90000);

  test('when a notification asks for number matching, then the app asks for the number, refuses a wrong one and accepts the right one', async () => {
    if (!signedIn) throw new Error('the sign-in test did not leave a signed-in page');
    const page = signedIn;
    const create = await sendJson(
      `${service.url}/v1/notifications`,
      'POST',
      enterprise,
      notificationBody(USER_ID, {
        numberMatch: true,
        body: [{ lng: 'English', subject: 'Payment approval', message: 'Approve the transfer of 120 EUR?' }],
      }),
    );
    expect(create.status).toBe(201);
    const { notification_uuid: uuid, number } = (await create.json()) as { notification_uuid: string; number: string };
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.locator('#pending-list li', { hasText: 'Payment approval' });
    const input = card.getByLabel('Number shown by the app asking for approval');
    await input.waitFor();
    await input.fill(number === '00' ? '01' : '00');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#status.error').waitFor();
    await page.screenshot({ path: 'test-results/approver-number-wrong.png' });
    expect(
      await (await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } })).json(),
    ).toMatchObject({ status: 'ACTIVE' });

    await page
      .locator('#pending-list li', { hasText: 'Payment approval' })
      .getByLabel('Number shown by the app asking for approval')
      .fill(number);
    await page.locator('#pending-list li', { hasText: 'Payment approval' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'Answer sent' }).waitFor();
    await page.screenshot({ path: 'test-results/approver-number-right.png', fullPage: true });
    expect(
      await (await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } })).json(),
    ).toMatchObject({ status: 'UPDATED', action: 'accept' });
    await page.close();
  }, 60000);
});
