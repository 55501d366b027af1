import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('queue dashboard', () => {
  let service: TestService;
  let browser: Browser | undefined;
  beforeAll(async () => {
    service = await startTestService('queuesdash');
    await service.ctx.queues.dispatch.add('probe', { deliveryId: 'x' }, { delay: 600000, jobId: 'dashboard-probe' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service.close();
  });

  test('when the dashboard is opened without the admin token, then 401 asks the browser for Basic credentials', async () => {
    const res = await fetch(`${service.url}/admin/queues`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="svc-identity admin", charset="UTF-8"');
    const wrong = await fetch(`${service.url}/admin/queues`, {
      headers: { authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}` },
    });
    expect(wrong.status).toBe(401);
  });

  test('when an operator signs in with the admin token, then every queue is listed with its jobs', async () => {
    if (!browser) throw new Error('no browser');
    const context = await browser.newContext({ httpCredentials: { username: 'ops', password: service.config.adminToken as string } });
    const page = await context.newPage();
    // The page's own Content-Security-Policy must fit it; only the third-party web font is refused.
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy') && !message.text().includes('https://fonts.googleapis.com/'))
        refused.push(message.text());
    });
    await page.goto(`${service.url}/admin/queues`);
    for (const queue of ['dispatch', 'enrollment', 'notification', 'notification-callback']) {
      await page.getByText(queue, { exact: true }).first().waitFor({ timeout: 20000 });
    }
    await page.goto(`${service.url}/admin/queues/queue/dispatch?status=delayed`);
    await page.getByText('dashboard-probe').first().waitFor({ timeout: 20000 });
    await page.screenshot({ path: 'test-results/queues-dashboard.png' });
    expect(refused).toEqual([]);
    await context.close();
  });
});
