import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('API docs page in a real browser', () => {
  let service: TestService;
  let browser: Browser | undefined;
  beforeAll(async () => {
    service = await startTestService('docspage');
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
});
