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

// Each enterprise's share of a process's streams (NOTIFICATION_STREAMS_ENTERPRISE_SHARE_PERCENT):
// one enterprise may fill the room others leave free, but cannot keep another enterprise out.
describe('notification streams each enterprise holds of one API process', () => {
  const CAPACITY = 4;
  // Half the process's streams: two each.
  const SHARE_PERCENT = 50;
  let service: TestService;
  let acme: string;
  let globex: string;

  beforeAll(async () => {
    service = await startTestService('streamshare', {
      NOTIFICATION_STREAMS_PER_PROCESS: String(CAPACITY),
      NOTIFICATION_STREAMS_ENTERPRISE_SHARE_PERCENT: String(SHARE_PERCENT),
    });
    await insertUser(service.ctx.mongo, { userId: 'ann', enterpriseId: 'acme' });
    await insertUser(service.ctx.mongo, { userId: 'bob', enterpriseId: 'globex' });
    acme = await mintUserToken(service, {
      userId: 'ann',
      clientId: await registerAppClient(service, { name: 'acme app', enterpriseId: 'acme' }),
    });
    globex = await mintUserToken(service, {
      userId: 'bob',
      clientId: await registerAppClient(service, { name: 'globex app', enterpriseId: 'globex' }),
    });
  });
  afterAll(async () => {
    await service.close();
  });

  const stream = (token: string) => openEventStream(`${service.url}/v1/me/notifications/stream`, { authorization: `Bearer ${token}` });
  const refusal = async (token: string) => {
    const res = await fetch(`${service.url}/v1/me/notifications/stream`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as unknown };
  };

  test('when one enterprise holds all of the process streams, then another enterprise still opens its share, the first one’s oldest streams end, and the first is refused with 503 and Retry-After', async () => {
    const open: Awaited<ReturnType<typeof stream>>[] = [];
    try {
      // Alone, an enterprise takes the whole process, as a deployment of one enterprise does.
      for (let i = 0; i < CAPACITY; i += 1) open.push(await stream(acme));
      expect(open.map((s) => s.status)).toEqual(Array(CAPACITY).fill(200));
      const [oldest, second] = open;

      const first = await stream(globex);
      open.push(first);
      expect(first.status).toBe(200);
      await expect((oldest as (typeof open)[number]).next(5000)).rejects.toThrow('stream ended');
      const again = await stream(globex);
      open.push(again);
      expect(again.status).toBe(200);
      await expect((second as (typeof open)[number]).next(5000)).rejects.toThrow('stream ended');
      expect(service.ctx.userEvents.streams()).toBe(CAPACITY);

      // Each now holds its share: neither takes one of the other's.
      for (const token of [acme, globex])
        expect(await refusal(token)).toEqual({
          status: 503,
          retryAfter: '3',
          body: expect.objectContaining({
            code: 39,
            message: 'Too many open notification streams for this enterprise (at most 50% of this server), try again later',
          }),
        });
    } finally {
      for (const s of open) s.close();
    }
  });
});
