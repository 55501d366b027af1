import { randomBytes } from 'node:crypto';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findFreePort } from '../../scripts/local-services.js';
import { notificationModel } from '../../core/notifications/notifications.repository.js';
import { createClientThroughAdminApi } from '../support/auth-helpers.js';
import { notificationBody } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

// Two processes of each role that carries load (API, dispatch, notifications), started from
// their compiled Procfile entries on one Redis and one MongoDB-wire server, as operators scale
// them apart. Every message and callback is counted where it arrives.

// The full run; smaller counts (SCALING_OTPS, SCALING_NOTIFICATIONS) only for a quick check
// while developing.
const OTPS = Number(process.env.SCALING_OTPS ?? 2000);
const NOTIFICATIONS = Number(process.env.SCALING_NOTIFICATIONS ?? 500);
const USERS = 50;
const TEMPLATE = 'scaling_sms';

/** A stand-in for Twilio's Messages API counting every message by the trace in its text. */
async function startSmsCounter(): Promise<{ url: string; received: Map<string, number>; requests: () => number; server: Server }> {
  const received = new Map<string, number>();
  let requests = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests += 1;
      const trace = /trace ([a-z0-9-]+)/.exec(new URLSearchParams(body).get('Body') ?? '')?.[1];
      if (trace) received.set(trace, (received.get(trace) ?? 0) + 1);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sid: `SM${randomBytes(16).toString('hex')}`, status: 'queued' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, requests: () => requests, server };
}

/** A callback receiver counting the calls per notification and the final state each carried. */
async function startCallbackCounter(): Promise<{ url: string; received: Map<string, string[]>; server: Server }> {
  const received = new Map<string, string[]>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { notification_uuid: string; status: string };
      received.set(body.notification_uuid, [...(received.get(body.notification_uuid) ?? []), body.status]);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`, received, server };
}

/**
 * POSTs JSON over a keep-alive agent; resolves to the status and parsed body. A request reset on
 * a reused connection is sent again, as HTTP clients do: the server closed that connection as
 * idle at the moment the request left, so it never read it.
 */
async function post(
  agent: Agent,
  url: string,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await postOnce(agent, url, token, body, headers);
    } catch (err) {
      const { code, reusedSocket } = err as NodeJS.ErrnoException & { reusedSocket?: boolean };
      if (!(reusedSocket && code === 'ECONNRESET') || attempt === 3) throw err;
    }
  }
}

function postOnce(
  agent: Agent,
  url: string,
  token: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          ...headers,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || '{}') as Record<string, unknown> }));
      },
    );
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(payload);
  });
}

/** Runs `task(i)` for i in [0, count) with at most `parallel` at a time. */
async function inParallel<T>(count: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** How many jobs of `queue` a worker process reports having completed (its debug log). */
function jobsCompleted(worker: WorkerProcess, queue: string): number {
  return worker
    .output()
    .split('\n')
    .filter((line) => line.includes('"msg":"job completed"') && line.includes(`"queue":"${queue}"`)).length;
}

describe('Scaling apart: two API, two dispatch and two notification processes on one Redis and one MongoDB', () => {
  let service: TestService;
  let sms: Awaited<ReturnType<typeof startSmsCounter>>;
  let callbacks: Awaited<ReturnType<typeof startCallbackCounter>>;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    sms = await startSmsCounter();
    callbacks = await startCallbackCounter();
    service = await startTestService('scaling', {
      RATE_LIMIT_OTP_PER_USER: '100000',
      RATE_LIMIT_OTP_PER_CLIENT: '100000',
      TWILIO_ACCOUNT_SID: `AC${randomBytes(16).toString('hex')}`,
      TWILIO_AUTH_TOKEN: randomBytes(16).toString('hex'),
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE_URL: sms.url,
      // On a busy shared test machine a request can take longer than the default 5 s to commit;
      // this test is about sharing work, not about that deadline (tested on its own).
      REQUEST_DEADLINE_MS: '60000',
      // The callback receiver is this test's own, on loopback: an operator's opt-in outside development.
      NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on',
    });
  });
  afterAll(async () => {
    for (const proc of processes) if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((p) => p.exited));
    await new Promise((resolve) => sms.server.close(resolve));
    await new Promise((resolve) => callbacks.server.close(resolve));
    await service.close();
  });

  test(`when ${OTPS} OTPs and ${NOTIFICATIONS} expiring notifications are sent through both APIs, then every message goes out once, every notification expires once with one callback, and both processes of each role take work`, async () => {
    // Clients, users and the traced template, through the admin API as an operator would.
    const admin = service.config.adminToken as string;
    const { accessToken: token } = await createClientThroughAdminApi(service, { name: 'bank', scopes: ['otp', 'notifications'] });
    const template = await sendJson(`${service.url}/admin/templates`, 'POST', admin, {
      name: TEMPLATE,
      channel: 'SMS',
      text: 'Your code is __SVC_OTP__ (trace __TRACE__)',
    });
    expect(template.status).toBe(201);
    const userIds = Array.from({ length: USERS }, (_, i) => `scale${i}`);
    for (const [i, userId] of userIds.entries())
      await insertUser(service.ctx.mongo, { userId, mobileNumber: `+1555000${String(i).padStart(4, '0')}` });

    // Two of each role, started from the compiled Procfile entries with the service's settings.
    const workerEnv = { ...service.env, LOG_LEVEL: 'debug' };
    const apiPorts = [await findFreePort(), await findFreePort()];
    const apis = apiPorts.map((port) => spawnProcessEntry('api/main.js', { ...service.env, PORT: String(port) }));
    const dispatchers = [0, 1].map(() => spawnProcessEntry('workers/dispatch/main.js', workerEnv));
    const notifiers = [0, 1].map(() => spawnProcessEntry('workers/notifications/main.js', workerEnv));
    processes.push(...apis, ...dispatchers, ...notifiers);
    await Promise.all([
      ...apis.map((p) => waitForOutput(p, 'API listening', 120000)),
      ...dispatchers.map((p) => waitForOutput(p, 'dispatch worker running', 120000)),
      ...notifiers.map((p) => waitForOutput(p, 'notification-callback worker running', 120000)),
    ]);
    const apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });

    // Notifications first: they expire 15 s after creation, while the OTPs are being sent.
    const notificationAnswers = await inParallel(NOTIFICATIONS, 8, (i) =>
      post(
        agent,
        `${apiUrls[i % 2]}/v1/notifications`,
        token,
        notificationBody(userIds[i % USERS] as string, { expiresIn: 15, callbackUrl: callbacks.url }),
      ),
    );
    expect(notificationAnswers.filter((a) => a.status !== 201)).toEqual([]);
    const notificationUuids = notificationAnswers.map((a) => a.body.notification_uuid as string);

    const otpAnswers = await inParallel(OTPS, 8, (i) =>
      post(
        agent,
        `${apiUrls[i % 2]}/v1/svc-otp`,
        token,
        {
          userId: userIds[i % USERS],
          dispatchOptions: { SMS: TEMPLATE },
          dynamicMacros: { __TRACE__: `t-${i}` },
          attempts: 3,
          expiresIn: 600,
        },
        { 'idempotency-key': `t-${i}` },
      ),
    );
    agent.destroy();
    expect(otpAnswers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual([]);

    // Every OTP arrives at the provider; then, with every queue empty, nothing more can come.
    await eventually(async () => (sms.received.size === OTPS ? true : undefined), 300000, 200);
    await eventually(async () => (callbacks.received.size === NOTIFICATIONS ? true : undefined), 60000, 200);
    const idle = async (queue: 'dispatch' | 'notification' | 'notification-callback') => {
      const counts = await service.ctx.queues[queue].getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    };
    await eventually(
      async () => ((await idle('dispatch')) && (await idle('notification')) && (await idle('notification-callback')) ? true : undefined),
      30000,
      200,
    );

    // Exactly once: every trace once at the provider, no request without a trace.
    const sentTwice = [...sms.received].filter(([, n]) => n !== 1);
    expect(sentTwice).toEqual([]);
    expect([...sms.received.keys()].sort()).toEqual(Array.from({ length: OTPS }, (_, i) => `t-${i}`).sort());
    expect(sms.requests()).toBe(OTPS);

    // Every notification EXPIRED once and called back once, with that state.
    const stored = await (
      await notificationModel(service.ctx.mongo)
    )
      .find({ notificationUuid: { $in: notificationUuids } }, { status: 1, callbackState: 1 })
      .lean();
    expect(stored.filter((n) => n.status !== 'EXPIRED' || n.callbackState !== 'SENT')).toEqual([]);
    expect(stored).toHaveLength(NOTIFICATIONS);
    // No notification was created twice (this test file's database holds only these).
    expect(await (await notificationModel(service.ctx.mongo)).countDocuments({})).toBe(NOTIFICATIONS);
    expect([...callbacks.received.keys()].sort()).toEqual([...notificationUuids].sort());
    expect([...callbacks.received.values()].filter((states) => states.length !== 1 || states[0] !== 'EXPIRED')).toEqual([]);

    // Both processes of each role took work.
    const perProcess = {
      dispatch: dispatchers.map((p) => jobsCompleted(p, 'dispatch')),
      notification: notifiers.map((p) => jobsCompleted(p, 'notification')),
      notificationCallback: notifiers.map((p) => jobsCompleted(p, 'notification-callback')),
    };
    for (const counts of Object.values(perProcess)) for (const n of counts) expect(n).toBeGreaterThan(0);
    expect(perProcess.notificationCallback.reduce((a, b) => a + b, 0)).toBe(NOTIFICATIONS);
    for (const api of apis) expect(api.output()).not.toMatch(/"level":(50|60)/);
  }, 600000);
});
