import { OutboxProvider } from '../../core/providers/outbox.provider.js';
import { startTestService, type TestService } from '../support/test-service.js';

const D1_TIMESTAMP = expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/);

describe('GET /admin/outbox', () => {
  let service: TestService;
  const get = (query: string) =>
    fetch(`${service.url}/admin/outbox${query}`, { headers: { authorization: `Bearer ${service.config.adminToken ?? ''}` } });

  beforeAll(async () => {
    service = await startTestService('outbox');
    const outbox = new OutboxProvider(service.services.repositories.outbox, service.ctx.logger);
    for (let i = 1; i <= 25; i += 1) await outbox.send({ to: '+14155550001', text: `sms ${i}` });
    await outbox.send({ to: 'ada@example.com', subject: 'Code', text: 'mail 1', html: '<b>1</b>', otpUuid: 'otp-1' });
    await outbox.send({ to: '+14155550002', text: 'other', otpUuid: 'otp-2' });
  });
  afterAll(async () => {
    await service.close();
  });

  test('when no filter is given, then the 20 newest messages, newest first', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    const list = (await res.json()) as { text: string }[];
    expect(list).toHaveLength(20);
    expect(list.slice(0, 3)).toEqual([
      { channel: 'SMS', to: '+14155550002', text: 'other', otpUuid: 'otp-2', createdAt: ISO },
      { channel: 'EMAIL', to: 'ada@example.com', subject: 'Code', text: 'mail 1', html: '<b>1</b>', otpUuid: 'otp-1', createdAt: ISO },
      { channel: 'SMS', to: '+14155550001', text: 'sms 25', createdAt: ISO },
    ]);
    expect(list[19]?.text).toBe('sms 8');
  });

  test('when filtered by address with a limit, then only that address, newest first', async () => {
    const res = await get('?to=%2B14155550001&limit=3');
    expect(await res.json()).toEqual([
      { channel: 'SMS', to: '+14155550001', text: 'sms 25', createdAt: ISO },
      { channel: 'SMS', to: '+14155550001', text: 'sms 24', createdAt: ISO },
      { channel: 'SMS', to: '+14155550001', text: 'sms 23', createdAt: ISO },
    ]);
    expect(await (await get('?to=nobody%40example.com')).json()).toEqual([]);
    expect((await (await get('?limit=100')).json()) as unknown[]).toHaveLength(27);
  });

  test('when the limit is not an integer from 1 to 100, then 422', async () => {
    for (const limit of ['0', '101', 'abc', '-1', '2.5']) {
      const res = await get(`?limit=${limit}`);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        timestamp: D1_TIMESTAMP,
        status: 422,
        error: 'Invalid data.',
        message: '[Invalid field limit]',
        path: '/admin/outbox',
      });
    }
  });
});
