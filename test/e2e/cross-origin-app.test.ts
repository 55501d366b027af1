import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { registerClient } from '../../core/clients/clients.service.js';
import { appendUserEvent } from '../../core/notifications/notification-user-events.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { launchBrowser } from '../support/browser.js';
import { mintUserToken } from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { eventually } from '../support/waiting.js';

const USER_ID = 'xo-pia';

/** The page of an app on its own origin: the client library through an import map, and nothing else. */
const PAGE = `<!doctype html><html><head><script type="importmap">
{"imports": {"@svc-identity/client": "/lib/client/index.js", "oauth4webapi": "/lib/oauth4webapi/index.js"}}
</script><script type="module" src="/watch.js"></script></head><body></body></html>`;

/**
 * The app's script: watches the user's notifications with the library. Its fetch cuts the first
 * stream right after its first event, as a network break would, so the library reconnects with
 * Last-Event-ID, a header the service's CORS answer must allow.
 */
const WATCH_SCRIPT = `
import { NotificationClient } from '@svc-identity/client';
window.seen = [];
window.errors = [];
window.streamsAnswered = 0;
function endingAfterFirstEvent(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const body = new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      text += decoder.decode(value, { stream: true });
      if (/(^|\\n)id: [^\\n]*\\n([^\\n]+\\n)*\\n/.test(text)) {
        controller.close();
        await reader.cancel();
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}
window.startWatch = (serviceUrl, token) => {
  const breakingFetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!String(input).endsWith('/stream') || !res.ok) return res;
    window.streamsAnswered += 1;
    return window.streamsAnswered === 1 ? endingAfterFirstEvent(res) : res;
  };
  const client = new NotificationClient({ serviceUrl, getAccessToken: () => token, fetch: breakingFetch });
  client.on('onNotificationCreated', (change) => window.seen.push(change.notification_uuid));
  client.on('error', (error) => window.errors.push(error.kind + ': ' + error.message));
  window.watch = client.watchNotifications();
};
`;

/** The app's files: its page, its script, the client library's build and its one dependency. */
function appFile(path: string): { type: string; body: string | Buffer } | undefined {
  const js = 'text/javascript';
  if (path === '/') return { type: 'text/html', body: PAGE };
  if (path === '/watch.js') return { type: js, body: WATCH_SCRIPT };
  if (path === '/lib/oauth4webapi/index.js')
    return { type: js, body: readFileSync(join(projectRoot, 'node_modules', 'oauth4webapi', 'build', 'index.js')) };
  // Only the library's own file names, so no path reaches elsewhere.
  const library = /^\/lib\/client\/([a-z0-9-]+\.js)$/.exec(path);
  return library ? { type: js, body: readFileSync(join(projectRoot, 'sdk', 'dist', library[1] as string)) } : undefined;
}

/**
 * An app whose page is on another origin than the service (a web origin of its public client),
 * in Debian's Chromium: the browser, not a test's fetch, decides what CORS lets through.
 */
describe('an app on another origin in a real browser', () => {
  let service: TestService;
  let appServer: Server;
  let appUrl: string;
  let browser: Browser | undefined;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('crossorigin');
    appServer = createServer((req, res) => {
      const file = appFile(new URL(req.url ?? '/', 'http://app').pathname);
      if (!file) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': file.type }).end(file.body);
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    // localhost, while the service is 127.0.0.1: the same machine, another origin.
    appUrl = `http://localhost:${(appServer.address() as AddressInfo).port}`;
    const { client } = await registerClient(service.services.clients, {
      name: 'App on its own origin',
      scopes: ['notifications'],
      public: true,
      redirectUris: [`${appUrl}/callback`],
      webOrigins: [appUrl],
    });
    await insertUser(service.ctx.mongo, { userId: USER_ID, mobileNumber: '+15550500077' });
    token = await mintUserToken(service, { userId: USER_ID, clientId: client.clientId });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => appServer.close(resolve));
    await service.close();
  });

  const pageState = (page: Page) =>
    page.evaluate<{ seen: string[]; errors: string[]; streamsAnswered: number }>(
      '({ seen: window.seen, errors: window.errors, streamsAnswered: window.streamsAnswered })',
    );

  async function notifyUser(): Promise<string> {
    const uuid = randomUUID();
    await appendUserEvent(service.ctx.redis, service.config.queuePrefix, DEFAULT_ENTERPRISE_ID, USER_ID, {
      type: 'created',
      notification_uuid: uuid,
      status: 'ACTIVE',
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });
    return uuid;
  }

  test('when the page’s notification stream breaks, then the library resumes it from that origin (Last-Event-ID allowed) and the page gets the next notification', async () => {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    try {
      await page.goto(`${appUrl}/`);
      await page.waitForFunction('typeof window.startWatch === "function"');
      await page.evaluate(`window.startWatch(${JSON.stringify(service.url)}, ${JSON.stringify(token)})`);
      // The page has the stream's head: the service listens, and starts after the newest event then.
      await eventually(async () => ((await pageState(page)).streamsAnswered === 1 ? true : undefined));

      const first = await notifyUser();
      await eventually(async () => ((await pageState(page)).seen.includes(first) ? true : undefined));
      // The library waits the stream's retry (3 s), then reconnects with the id of the first event.
      const reconnected = await eventually(async () => {
        const state = await pageState(page);
        return state.streamsAnswered === 2 || state.errors.length > 0 ? state : undefined;
      });
      expect(reconnected.errors).toEqual([]);

      const second = await notifyUser();
      await eventually(async () => ((await pageState(page)).seen.includes(second) ? true : undefined));
      expect((await pageState(page)).seen).toEqual([first, second]);
    } finally {
      await page.evaluate('window.watch?.stop()').catch(() => undefined);
      await page.close();
    }
  }, 60000);
});
