import { updateTemplate } from '../../core/templates/templates.service.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('template cache', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('templatecache');
  });
  afterAll(async () => {
    await service.close();
  });

  test('when a template is edited through this process, then the next read sees the edit at once', async () => {
    const before = await service.services.templateCache.find('otp_sms');
    expect(before?.text).toContain('__SVC_OTP__');
    await updateTemplate(service.services.templates, 'otp_sms', { channel: 'SMS', text: 'Code: __SVC_OTP__' });
    expect((await service.services.templateCache.find('otp_sms'))?.text).toBe('Code: __SVC_OTP__');
  });

  test('when another process edits a template, then reads see it once the cache time has passed', async () => {
    const at = Date.now();
    expect((await service.services.templateCache.find('otp_email', at))?.version).toBe(1);
    await service.ctx.mongo.collection('templates').updateOne({ name: 'otp_email' }, { $set: { version: 7 } });
    expect((await service.services.templateCache.find('otp_email', at + 4999))?.version).toBe(1);
    expect((await service.services.templateCache.find('otp_email', at + 5000))?.version).toBe(7);
  });
});
