import { createTemplate, deleteTemplate, updateTemplate } from '../../core/templates/templates.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, outboxMessageFor, postJson } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { adminRequest } from '../support/admin-requests.js';

describe('template cache', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('templatecache');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a template is edited through this process, then the next read sees the edit at once', async () => {
    const before = await service.services.templateCache.find('otp_sms', 'default');
    expect(before?.text).toContain('__SVC_OTP__');
    await updateTemplate(service.services.templates, 'otp_sms', undefined, { channel: 'SMS', text: 'Code: __SVC_OTP__' });
    expect((await service.services.templateCache.find('otp_sms', 'default'))?.text).toBe('Code: __SVC_OTP__');
  });

  test('when another process edits a template, then reads see it once the cache time has passed', async () => {
    const at = Date.now();
    expect((await service.services.templateCache.find('otp_email', 'default', at))?.version).toBe(1);
    await service.ctx.mongo.collection('templates').updateOne({ name: 'otp_email' }, { $set: { version: 7 } });
    expect((await service.services.templateCache.find('otp_email', 'default', at + 4999))?.version).toBe(1);
    expect((await service.services.templateCache.find('otp_email', 'default', at + 5000))?.version).toBe(7);
  });

  test("when an enterprise's own template is created, edited or deleted through this process, then that enterprise's reads see it at once and other enterprises' reads keep the shared one", async () => {
    const { templates, templateCache } = service.services;
    const textFor = async (enterpriseId: string) => (await templateCache.find('login_sms', enterpriseId))?.text;
    const shared = await textFor('cache-own');
    expect(shared).toContain('__SVC_OTP__');
    expect(await textFor('cache-other')).toBe(shared);

    await createTemplate(templates, { name: 'login_sms', channel: 'SMS', text: 'Own: __SVC_OTP__', enterpriseId: 'cache-own' });
    expect(await textFor('cache-own')).toBe('Own: __SVC_OTP__');
    await updateTemplate(templates, 'login_sms', 'cache-own', { channel: 'SMS', text: 'Own 2: __SVC_OTP__' });
    expect(await textFor('cache-own')).toBe('Own 2: __SVC_OTP__');
    expect(await textFor('cache-other')).toBe(shared);
    // A request naming the owner inside the name finds nothing: the keys carry the owner apart.
    expect(await templateCache.find('cache-own login_sms', 'cache-other')).toBeUndefined();
    expect(await templateCache.find('["cache-own","login_sms"]', 'cache-other')).toBeUndefined();

    await deleteTemplate(templates, 'login_sms', 'cache-own');
    expect(await textFor('cache-own')).toBe(shared);
  });
});

describe('template edits between the API and the dispatch worker', () => {
  let service: TestService;
  let worker: RunningWorker;
  let token: string;
  const mobile = '+15550401111';
  const admin = (method: string, path: string, body: unknown) => adminRequest(service, method, path, body);
  const otpState = async (otpUuid: string) =>
    (await (await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      deliveries: { state: string }[];
    };

  beforeAll(async () => {
    service = await startTestService('templateedits');
    worker = await startDispatchWorker(service.config, memoryLogger().logger);
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'olga', mobileNumber: mobile });
  });
  afterAll(async () => {
    await worker.shutdown();
    await service.close();
  });

  test('when an edit drops a macro and an OTP without it follows at once, then the worker sends the edited template', async () => {
    expect(
      (await admin('POST', '/admin/templates', { name: 'city_sms', channel: 'SMS', text: 'Code __SVC_OTP__ for __CITY__' })).status,
    ).toBe(201);
    const first = await postJson(
      `${service.url}/v1/svc-otp`,
      token,
      otpBody('olga', { dispatchOptions: { SMS: 'city_sms' }, dynamicMacros: { __CITY__: 'Oslo' } }),
    );
    const { otpUuid: firstUuid } = (await first.json()) as { otpUuid: string };
    // The worker has read the template now, and keeps it for a few seconds.
    expect((await outboxMessageFor(service, mobile, firstUuid)).text).toMatch(/ for Oslo$/);

    expect((await admin('PUT', '/admin/templates/city_sms', { channel: 'SMS', text: 'Code __SVC_OTP__' })).status).toBe(200);
    // The API checks the request against the edited template: no __CITY__ needed any more.
    const second = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('olga', { dispatchOptions: { SMS: 'city_sms' } }));
    expect(second.status).toBe(200);
    const { otpUuid } = (await second.json()) as { otpUuid: string };
    const states = await eventually(async () => {
      const { deliveries } = await otpState(otpUuid);
      return deliveries.length > 0 && deliveries.every((d) => d.state !== 'PENDING' && d.state !== 'QUEUED') ? deliveries : undefined;
    });
    expect(states.map((d) => d.state)).toEqual(['SENT']);
    expect((await outboxMessageFor(service, mobile, otpUuid)).text).toMatch(/^Code [0-9]{6}$/);
  });
});
