import { mintUserToken, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { openEventStream } from '../support/sse-client.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

// A process's share of notification streams (NOTIFICATION_STREAMS_PER_PROCESS), set low so the
// test reaches it with a few users.
describe('notification streams one API process holds', () => {
  const CAPACITY = 3;
  let service: TestService;
  const tokens: string[] = [];

  beforeAll(async () => {
    service = await startTestService('streamcap', { NOTIFICATION_STREAMS_PER_PROCESS: String(CAPACITY) });
    const appClientId = await registerAppClient(service);
    for (let i = 0; i <= CAPACITY; i += 1) {
      await insertUser(service.ctx.mongo, { userId: `capped${i}` });
      tokens.push(await mintUserToken(service, { userId: `capped${i}`, clientId: appClientId }));
    }
  });
  afterAll(async () => {
    await service.close();
  });

  const stream = (token: string) => openEventStream(`${service.url}/v1/me/notifications/stream`, { authorization: `Bearer ${token}` });

  test('when the process holds as many streams as allowed, then the next user is refused with 503 and Retry-After until one closes', async () => {
    const open = await Promise.all(tokens.slice(0, CAPACITY).map(stream));
    try {
      expect(open.map((s) => s.status)).toEqual(Array(CAPACITY).fill(200));
      const refused = await fetch(`${service.url}/v1/me/notifications/stream`, {
        headers: { authorization: `Bearer ${tokens[CAPACITY] as string}`, accept: 'text/event-stream' },
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('3');
      expect(await refused.json()).toMatchObject({ code: 39, message: 'Too many open notification streams, try again later' });

      open.shift()?.close();
      const admitted = await eventually(async () => {
        const attempt = await stream(tokens[CAPACITY] as string);
        if (attempt.status === 200) return attempt;
        attempt.close();
        return undefined;
      });
      open.push(admitted);
      expect(service.ctx.userEvents.streams()).toBe(CAPACITY);
    } finally {
      for (const s of open) s.close();
    }
  });
});
