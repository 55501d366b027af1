import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallbackAddressRefusedError, guardedPost, type Resolver } from '../../core/notifications/guarded-post.js';
import { notificationModel } from '../../core/notifications/notifications.repository.js';
import type { CreateNotificationInput } from '../../core/notifications/notifications.service.js';
import { callbackJobId } from '../../core/platform/queues/notification.queue.js';
import { createClientThroughAdminApi, createClientWithToken } from '../support/auth-helpers.js';
import { notificationBody, notificationsServiceOver } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody, sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** A receiver on loopback that records every request it gets (none is the right number here). */
async function startReceiver(): Promise<{ port: number; received: string[]; server: Server }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as AddressInfo).port, received, server };
}

/*
 * Callback URLs reach only public addresses. The service runs as in production here (loopback not
 * allowed, no private network listed): every spelling of an internal address is refused when the
 * notification is created.
 */
describe('Notification callbacks: internal addresses refused at creation', () => {
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    service = await startTestService('notifcbaddr');
    token = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'carol' });
  });
  afterAll(async () => {
    await service.close();
  });

  const create = (callbackUrl: string) =>
    sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('carol', { callbackUrl }));

  test.each([
    // Loopback, in every spelling the URL parser accepts for 127.0.0.1 and ::1.
    ['http://127.0.0.1:8080/cb', '127.0.0.1', 'loopback'],
    ['https://127.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.1/cb', '127.0.0.1', 'loopback'],
    ['https://2130706433/cb', '127.0.0.1', 'loopback'],
    ['https://0x7f.1/cb', '127.0.0.1', 'loopback'],
    ['https://0x7f000001/cb', '127.0.0.1', 'loopback'],
    ['https://0177.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.0.0.1./cb', '127.0.0.1', 'loopback'],
    ['https://%31%32%37.0.0.1/cb', '127.0.0.1', 'loopback'],
    ['https://127.255.255.254/cb', '127.255.255.254', 'loopback'],
    ['https://[::1]/cb', '::1', 'loopback'],
    ['https://[0:0:0:0:0:0:0:1]/cb', '::1', 'loopback'],
    ['https://[::ffff:127.0.0.1]/cb', '127.0.0.1', 'loopback'],
    ['https://[::ffff:7f00:1]/cb', '127.0.0.1', 'loopback'],
    ['https://localhost/cb', 'localhost', 'loopback'],
    ['https://LOCALHOST./cb', 'localhost', 'loopback'],
    ['https://api.localhost/cb', 'api.localhost', 'loopback'],
    // Private (RFC 1918), shared (RFC 6598), link-local (cloud metadata), unique-local.
    ['https://10.0.0.1/cb', '10.0.0.1', 'private'],
    ['https://012.0.0.1/cb', '10.0.0.1', 'private'],
    ['https://172.16.5.4/cb', '172.16.5.4', 'private'],
    ['https://192.168.1.1/cb', '192.168.1.1', 'private'],
    ['https://3232235777/cb', '192.168.1.1', 'private'],
    ['https://[::ffff:10.0.0.1]/cb', '10.0.0.1', 'private'],
    ['https://100.64.0.1/cb', '100.64.0.1', 'shared'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link-local'],
    ['https://[::ffff:169.254.169.254]/latest/meta-data/', '169.254.169.254', 'link-local'],
    ['https://[fe80::1]/cb', 'fe80::1', 'link-local'],
    ['https://[fc00::1]/cb', 'fc00::1', 'unique-local'],
    ['https://[fd12:3456::1]/cb', 'fd12:3456::1', 'unique-local'],
    // Unspecified, multicast, broadcast and other non-public ranges.
    ['https://0.0.0.0/cb', '0.0.0.0', 'unspecified'],
    ['https://0/cb', '0.0.0.0', 'unspecified'],
    ['https://[::]/cb', '::', 'unspecified'],
    ['https://224.0.0.1/cb', '224.0.0.1', 'multicast'],
    ['https://[ff02::1]/cb', 'ff02::1', 'multicast'],
    ['https://255.255.255.255/cb', '255.255.255.255', 'broadcast'],
    ['https://[64:ff9b::7f00:1]/cb', '64:ff9b::7f00:1', 'rfc6052'],
    ['https://[2002:7f00:1::]/cb', '2002:7f00:1::', '6to4'],
    // IPv4-compatible IPv6 (::/96, deprecated): judged as the IPv4 address it carries.
    ['https://[::127.0.0.1]/cb', '127.0.0.1', 'loopback'],
    ['https://[::a9fe:a9fe]/cb', '169.254.169.254', 'link-local'],
    ['https://[::10.0.0.1]/cb', '10.0.0.1', 'private'],
  ])('when callbackUrl is %s, then 422 names %s as in the %s range', async (callbackUrl, address, range) => {
    const res = await create(callbackUrl);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(
      errorBody(
        422,
        'Invalid data.',
        `Invalid field callbackUrl: must reach a public address (${address} is in the ${range} range)`,
        '/v1/notifications',
      ),
    );
  });

  test.each([
    ['http://example.com/cb', 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)'],
    ['ftp://example.com/cb', 'Invalid field callbackUrl: must be https (http only on loopback, where allowed)'],
    ['https://user:pw@example.com/cb', 'Invalid field callbackUrl: must not carry credentials'],
    ['https://[::1/cb', 'Invalid field callbackUrl: must be an absolute URL'],
    ['https://256.0.0.1/cb', 'Invalid field callbackUrl: must be an absolute URL'],
  ])('when callbackUrl is %s, then 422: %s', async (callbackUrl, message) => {
    const res = await create(callbackUrl);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', message, '/v1/notifications'));
  });

  test.each(['https://8.8.8.8/cb', 'https://[2001:4860:4860::8888]/cb', 'https://hooks.example.com:8443/cb?tenant=1'])(
    'when callbackUrl is the public %s, then it is accepted (host names are checked when sending)',
    async (callbackUrl) => {
      expect((await create(callbackUrl)).status).toBe(201);
    },
  );
});

/*
 * When sending, the worker checks again: the URL (a record written before these rules, or by a
 * deployment that allowed loopback then) and every address the host name resolves to, with the
 * resolver the connection itself uses. A refused callback is FAILED at once, never retried.
 */
describe('Notification callbacks: internal addresses refused when sending', () => {
  let service: TestService;
  let worker: WorkerProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let token: string;
  let clientId: string;

  beforeAll(async () => {
    service = await startTestService('notifcbsend');
    receiver = await startReceiver();
    // Through the admin API, as an operator would: the client gets its callback secret.
    ({ clientId, accessToken: token } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['notifications'] }));
    await insertUser(service.ctx.mongo, { userId: 'dave' });
    worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(worker, 'notification-callback worker running');
  });
  afterAll(async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await new Promise((resolve) => receiver.server.close(resolve));
    await service.close();
  });

  /** Stored as a deployment that allowed loopback would have stored it. */
  const storeWithCallback = (callbackUrl: string) =>
    notificationsServiceOver(service, { callbackPolicy: { allowLoopback: true, allowedNetworks: [] } }).create(
      { clientId, enterpriseId: 'default' },
      {
        ...(notificationBody('dave') as unknown as CreateNotificationInput),
        callbackUrl,
      },
    );

  test.each([
    ['http://localhost:PORT/cb', 'localhost (the system resolver gives a loopback address)'],
    ['http://127.1:PORT/cb', '127.1'],
    ['http://2130706433:PORT/cb', '2130706433'],
    ['http://0x7f.1:PORT/cb', '0x7f.1'],
    ['http://0177.0.0.1:PORT/cb', '0177.0.0.1'],
    ['http://[::ffff:127.0.0.1]:PORT/cb', '[::ffff:127.0.0.1]'],
    ['https://127.0.0.1:PORT/cb', 'https to 127.0.0.1'],
  ])(
    'when the callback of a notification ended goes to %s, then nothing reaches the receiver, it is FAILED after one attempt and logged',
    async (template, label) => {
      void label;
      const url = template.replace('PORT', String(receiver.port));
      const { notificationUuid: uuid } = await storeWithCallback(url);
      const cancelled = await fetch(`${service.url}/v1/notifications/${uuid}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(cancelled.status).toBe(200);
      const stored = await eventually(async () => {
        const record = await (await notificationModel(service.ctx.mongo)).findOne({ notificationUuid: uuid }).lean();
        return record?.callbackState === 'FAILED' ? record : undefined;
      });
      expect(stored).toMatchObject({ status: 'CANCELLED', callbackState: 'FAILED' });
      const seen = await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${token}` } });
      expect(await seen.json()).toMatchObject({ status: 'CANCELLED', callback_status: 'FAILED' });
      expect(receiver.received).toEqual([]);
      const job = await eventually(async () => {
        const j = await service.ctx.queues['notification-callback'].getJob(callbackJobId(uuid));
        return (await j?.getState()) === 'completed' ? j : undefined;
      });
      expect(job.attemptsMade).toBe(1);
      expect(job.returnvalue).toEqual({ outcome: 'refused' });
      await waitForOutput(worker, `"notificationUuid":"${uuid}"`);
      const line = worker
        .output()
        .split('\n')
        .find((l) => l.includes(uuid) && l.includes('callback refused'));
      expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 40, reason: expect.stringContaining('loopback range') });
    },
  );
});

/*
 * The check and the connection use one resolution: whatever the resolver answers is what is
 * checked and what the socket connects to. Resolvers stand in for DNS here (the worker uses the
 * system's).
 */
describe('Callback sending: one resolution, checked and connected to', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  const resolverOf =
    (addresses: { address: string; family: number }[], calls: string[] = []): Resolver =>
    (hostname, callback) => {
      calls.push(hostname);
      callback(null, addresses);
    };
  const production = { allowLoopback: false, allowedNetworks: [] };

  test.each([
    [[{ address: '127.0.0.1', family: 4 }], '127.0.0.1 is in the loopback range'],
    [[{ address: '169.254.169.254', family: 4 }], '169.254.169.254 is in the link-local range'],
    [[{ address: '10.1.2.3', family: 4 }], '10.1.2.3 is in the private range'],
    [[{ address: '::ffff:192.168.0.1', family: 6 }], '192.168.0.1 is in the private range'],
    [[{ address: 'fd00::1', family: 6 }], 'fd00::1 is in the unique-local range'],
    [
      [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      '127.0.0.1 is in the loopback range',
    ],
  ])('when a host name resolves to %j, then the send is refused naming %s and nothing connects', async (addresses, reason) => {
    const calls: string[] = [];
    const sent = guardedPost(
      'https://hooks.example.test/cb',
      '{}',
      {},
      { policy: production, timeoutMs: 2000, resolver: resolverOf(addresses, calls) },
    );
    await expect(sent).rejects.toBeInstanceOf(CallbackAddressRefusedError);
    await expect(sent).rejects.toThrow(
      `callback refused: callbackUrl must reach a public address (${reason}); hooks.example.test resolved to it`,
    );
    expect(calls).toEqual(['hooks.example.test']);
  });

  test('when an operator lists a private network, then https to a name resolving into it is allowed past the check', async () => {
    const sent = guardedPost(
      'https://hooks.internal.test:1/cb',
      '{}',
      {},
      {
        policy: { allowLoopback: false, allowedNetworks: ['10.0.0.0/8'] },
        timeoutMs: 2000,
        resolver: resolverOf([{ address: '10.255.255.1', family: 4 }]),
      },
    );
    // Past the address check the connection is attempted (and fails here: nothing listens there).
    await expect(sent).rejects.not.toBeInstanceOf(CallbackAddressRefusedError);
  });

  test('when loopback is allowed, then the socket connects to the address the resolver gave (one resolution) and redirects are not followed', async () => {
    const redirecting = createServer((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `http://127.0.0.1:${receiver.port}/followed`);
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', () => resolve()));
    const port = (redirecting.address() as AddressInfo).port;
    try {
      const calls: string[] = [];
      const status = await guardedPost(
        `http://svc.localhost:${port}/cb`,
        '{"ok":true}',
        { 'content-type': 'application/json' },
        {
          policy: { allowLoopback: true, allowedNetworks: [] },
          timeoutMs: 2000,
          resolver: resolverOf([{ address: '127.0.0.1', family: 4 }], calls),
        },
      );
      expect(status).toBe(302);
      expect(calls).toEqual(['svc.localhost']);
      expect(receiver.received).toEqual([]);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
    }
  });
});
