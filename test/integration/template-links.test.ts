import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson, readOutbox } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { metricSample } from '../support/metrics-text.js';
import { adminRequest } from '../support/admin-requests.js';

describe('a macro inside a link of an e-mail template', () => {
  let service: TestService;
  let token: string;
  let worker: RunningWorker;
  const email = 'link.reader@example.com';

  beforeAll(async () => {
    service = await startTestService('templatelinks', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'reader', emailId: email });
    const created = await adminRequest(service, 'POST', '/admin/templates', {
      name: 'otp_email_link',
      channel: 'EMAIL',
      subject: 'Your code',
      text: 'Code __SVC_OTP__, or open __LINK__',
      html: '<p>Code <b>__SVC_OTP__</b>, or <a href="__LINK__">open the app</a></p>',
    });
    expect(created.status).toBe(201);
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  async function send(link: string): Promise<string> {
    const res = await postJson(
      `${service.url}/v1/svc-otp`,
      token,
      otpBody('reader', { dispatchOptions: { EMAIL: 'otp_email_link' }, dynamicMacros: { __LINK__: link } }),
    );
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  const settledDelivery = (otpUuid: string) =>
    eventually(async () => {
      const row = await service.ctx.mongo.collection('deliveries').findOne({ refId: otpUuid });
      return row && row.state !== 'QUEUED' ? row : undefined;
    });

  test('when the value is a javascript: URL, then the delivery fails at once with a reason naming the macro, and nothing is sent', async () => {
    const renderFailures = async () =>
      metricSample(await (await fetch(`${service.url}/metrics`)).text(), 'svc_delivery_render_failures_total{channel="EMAIL"}');
    const before = await renderFailures();
    const otpUuid = await send('javascript:alert(document.cookie)');
    const row = await settledDelivery(otpUuid);
    expect(row).toMatchObject({
      state: 'FAILED',
      lastError: 'render failed: Macro __LINK__ in a href attribute must give an http, https, mailto, tel URL',
    });
    // It never reached a provider: the row names none, and no ?provider= filter of the operators' list finds it.
    expect(row).not.toHaveProperty('provider');
    expect((await readOutbox(service, email)).filter((m) => m.otpUuid === otpUuid)).toEqual([]);
    // Counted apart (the delivery alert leaves out what no provider had): SvcIdentityTemplatesNotRendering reads it.
    expect(await renderFailures()).toBe(before + 1);
  });

  test('when the value is an https URL, then the e-mail is sent with it in the link', async () => {
    const otpUuid = await send('https://app.example.com/open?x=1');
    expect(await settledDelivery(otpUuid)).toMatchObject({ state: 'SENT' });
    const [message] = (await readOutbox(service, email)).filter((m) => m.otpUuid === otpUuid);
    expect(message?.html).toContain('<a href="https://app.example.com/open?x&#x3D;1">open the app</a>');
  });
});
