import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { loadConfig } from '../../core/platform/config/config.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson, readOutbox } from '../support/otp-helpers.js';
import { launchBrowser } from '../support/browser.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

// The screenshots in docs/ are refreshed on demand (UPDATE_DOC_IMAGES=1), so a test run leaves
// the tracked files as they were.
const SHOTS = process.env.UPDATE_DOC_IMAGES === '1' ? 'docs/images' : 'test-results';

const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'ef'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'replay-page-test-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});

describe('failed-deliveries page', () => {
  let service: TestService;
  let stub: ProviderStub;
  let worker: RunningWorker | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let foreign: Server | undefined;
  const mobile = '+15557654321';
  const otpUuids: string[] = [];
  const rows = () => service.ctx.mongo.collection('deliveries');

  beforeAll(async () => {
    service = await startTestService('replaypage', { RATE_LIMIT_OTP_PER_USER: '1000' });
    const { accessToken } = await createClientWithToken(service, { scopes: ['otp'] });
    await insertUser(service.ctx.mongo, { userId: 'nia', mobileNumber: mobile });
    // The SMS account is misconfigured: Twilio refuses every send and each OTP ends FAILED at once.
    stub = await startProviderStub([{ status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } }]);
    worker = await startDispatchWorker(loadConfig({ ...service.env, ...twilioEnv(stub.url) }), memoryLogger().logger);
    for (let i = 0; i < 3; i += 1) {
      const res = await postJson(`${service.url}/v1/svc-otp`, accessToken, otpBody('nia', { attempts: 1 }));
      otpUuids.push(((await res.json()) as { otpUuid: string }).otpUuid);
    }
    await eventually(async () => ((await rows().countDocuments({ state: 'FAILED' })) === 3 ? true : undefined), 60000);
    await worker.shutdown();
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    // The third OTP's only attempt is used up: it must be skipped.
    await postJson(`${service.url}/v1/svc-otp/${otpUuids[2]}/validate`, accessToken, { otp: '000000' });
    browser = await launchBrowser();
    context = await browser.newContext({
      httpCredentials: { username: 'ops', password: service.config.adminToken as string },
      viewport: { width: 1280, height: 640 },
    });
  }, 120000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await new Promise((resolve) => (foreign ? foreign.close(resolve) : resolve(undefined)));
    await worker?.shutdown();
    await stub.close();
    await service.close();
  });

  test('when another site makes the browser post the replay form, then it is refused and nothing is sent', async () => {
    if (!context) throw new Error('no browser');
    const target = `${service.url}/admin/delivery-replay/confirm`;
    foreign = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form method="post" action="${target}"><input name="ids" value="otp-${otpUuids[0]}-SMS"><input name="csrf" value="1.a.b"></form>` +
          '<script>document.forms[0].submit()</script>',
      );
    });
    await new Promise<void>((resolve) => foreign?.listen(0, '127.0.0.1', resolve));
    const page = await context.newPage();
    // (A 401 that asks the browser for its Basic credentials may come first.)
    const answered = page.waitForResponse((res) => res.url() === target && res.status() !== 401);
    await page.goto(`http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`);
    expect((await answered).status()).toBe(403);
    await page.close();

    // From a program with the token but without the page's form token: refused too.
    const forged = await fetch(target, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken ?? ''}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `ids=otp-${otpUuids[0]}-SMS&csrf=forged`,
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(await forged.text()).toContain('This form has expired or did not come from this page. Nothing was sent.');
    expect((await rows().findOne({ _id: `otp-${otpUuids[0]}-SMS` as never }))?.state).toBe('FAILED');
    expect(await readOutbox(service, mobile)).toEqual([]);
  });

  test('when an operator previews and confirms a replay, then the page shows what is sent and skipped, and only the wanted ones go out', async () => {
    if (!context) throw new Error('no browser');
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) refused.push(message.text());
    });
    await page.goto(`${service.url}/admin/delivery-replay?channel=SMS`);
    await page.getByRole('heading', { name: 'Failed deliveries' }).waitFor();
    const content = await page.content();
    expect(content).not.toContain('7654321');
    expect(content).toContain('+*********21');
    await expect(page.getByRole('checkbox').count()).resolves.toBe(3);
    for (const otpUuid of otpUuids) await page.getByRole('checkbox', { name: `Select otp-${otpUuid}-SMS` }).check();
    await page.screenshot({ path: `${SHOTS}/delivery-replay-list.png` });
    await page.getByRole('button', { name: 'Preview replay of the selected deliveries' }).click();
    await page.getByRole('heading', { name: 'Replay preview' }).waitFor();
    await page.getByText('Dry run: nothing has been sent yet. 2 would be sent again, 1 skipped.').waitFor();
    await page.getByText('Its OTP is locked: no attempts left.').waitFor();
    await page.screenshot({ path: `${SHOTS}/delivery-replay-preview.png` });
    expect(await rows().countDocuments({ state: 'FAILED' })).toBe(3);

    await page.getByLabel('Note for the activity record (optional)').fill('Twilio credentials fixed');
    await page.getByRole('button', { name: 'Send 2 again' }).click();
    await page.getByRole('heading', { name: 'Replay done' }).waitFor();
    await page.getByText('2 queued to be sent again, 0 skipped. Recorded in the activity record.').waitFor();
    expect(refused).toEqual([]);

    const sent = await eventually(async () => {
      const messages = await readOutbox(service, mobile);
      return messages.length === 2 ? messages : undefined;
    });
    expect(sent.map((m) => m.otpUuid).sort()).toEqual(otpUuids.slice(0, 2).sort());

    const activity = (await (
      await fetch(`${service.url}/admin/activity`, { headers: { authorization: `Bearer ${service.config.adminToken ?? ''}` } })
    ).json()) as { activity: Record<string, unknown>[] };
    expect(activity.activity.filter((e) => e.action === 'deliveries.replayed').map((e) => [e.action, e.replay, e.comments])).toEqual([
      ['deliveries.replayed', { selected: 2, queued: 2, skipped: 0 }, 'Twilio credentials fixed'],
    ]);
    await page.close();
  }, 60000);
});
