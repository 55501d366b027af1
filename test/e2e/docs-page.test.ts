import type { Browser } from 'playwright-core';
import { registerClient } from '../../core/clients/clients.service.js';
import { launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('API docs page in a real browser', () => {
  let service: TestService;
  let browser: Browser | undefined;
  beforeAll(async () => {
    // PUBLIC_URL is the address the browser uses: the Authorize button calls the token URL it names.
    service = await startTestService('docspage', {}, { ownPublicUrl: true });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service.close();
  });

  test('when /docs is opened, then Swagger UI renders the document from local assets only', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) errors.push(message.text());
    });
    await page.goto(`${service.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20000 });
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('svc-identity');
    await page.locator('.opblock-summary-path', { hasText: '/v1/svc-otp' }).first().waitFor();
    expect(await page.locator('.opblock-summary-path').count()).toBeGreaterThan(20);
    expect(errors).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
    await page.screenshot({ path: 'test-results/docs-page.png' });
  });

  test('when the service root is opened in a browser, then a page names the service and its docs link opens the docs', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${service.url}/`);
    expect(await page.locator('h1').innerText()).toMatch(/^svc-identity \d+\.\d+\.\d+$/);
    await page.screenshot({ path: 'test-results/home-page.png' });
    await page.getByRole('link', { name: /API documentation/ }).click();
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20000 });
    expect(new URL(page.url()).pathname).toBe('/docs');
    expect(errors).toEqual([]);
  });

  test('when the Authorize button is used with a client id and secret, then Swagger UI gets a client-credentials token from the token endpoint', async () => {
    if (!browser) throw new Error('no browser');
    const { client, clientSecret } = await registerClient(service.services.clients, {
      name: 'docs user',
      scopes: ['otp'],
      allowedIps: ['127.0.0.1/32', '::1/128'],
    });
    const page = await browser.newPage();
    const tokenAnswers: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/svc/authserver/oauth/token')) tokenAnswers.push(response.status());
    });
    await page.goto(`${service.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20000 });
    page.setDefaultTimeout(8000);
    await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
    const modal = page.locator('.swagger-ui .modal-ux');
    await modal.locator('input[data-name="clientId"]').fill(client.clientId);
    await modal.locator('input[data-name="clientSecret"]').fill(clientSecret as string);
    await modal.locator('button.modal-btn.auth.authorize').first().click();
    await modal.locator('button', { hasText: 'Logout' }).first().waitFor();
    expect(tokenAnswers).toEqual([200]);
    expect(await modal.innerText()).not.toMatch(/not allowed/i);
    await page.screenshot({ path: 'test-results/docs-authorized.png' });
    await page.close();
  });

  test('when a token is pasted in the bearer field, then Swagger UI accepts it as an authorization', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    await page.goto(`${service.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20000 });
    await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
    const modal = page.locator('.swagger-ui .modal-ux');
    const bearer = modal.locator('.auth-container', { hasText: 'bearerToken' });
    await bearer.locator('input').fill('pasted-token-value');
    await bearer.locator('button.modal-btn.auth.authorize').click();
    await bearer.locator('button', { hasText: 'Logout' }).waitFor();
    await page.screenshot({ path: 'test-results/docs-bearer-token.png' });
    await page.close();
  });
});
