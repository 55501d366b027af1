import { enqueuePushSends, pushFanoutJobId, pushSendJobId } from '../../core/platform/queues/push.queue.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { mintUserToken, notificationBody, registerAppClient } from '../support/notification-helpers.js';
import { eventually } from '../support/otp-helpers.js';
import { startPushReceiver, type PushReceiver, type TestSubscription } from '../support/push-receiver.js';
import { freePort, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { sendJson } from '../support/users-helpers.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

describe('Web Push of new notifications (notification worker process, local RFC 8030 push service)', () => {
  let service: TestService;
  let worker: WorkerProcess;
  let receiver: PushReceiver;
  let metricsPort: number;
  let enterprise: string;
  let acmeEnterprise: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    metricsPort = await freePort();
    service = await startTestService('pushdelivery', {
      // The push service of the test listens on loopback.
      PUSH_ENDPOINT_ALLOW_LOOPBACK: 'on',
      PUSH_RETRY_BASE_MS: '50',
      METRICS_PORT: String(metricsPort),
    });
    receiver = await startPushReceiver();
    await insertUser(service.ctx.mongo, { userId: 'alice' });
    await insertUser(service.ctx.mongo, { userId: 'alice', enterpriseId: 'acme' });
    const acmeApp = await registerAppClient(service, { name: 'acme app', enterpriseId: 'acme' });
    tokens.alice = await mintUserToken(service, { userId: 'alice', clientId: await registerAppClient(service) });
    tokens.acmeAlice = await mintUserToken(service, { userId: 'alice', clientId: acmeApp });
    enterprise = (await createClientWithToken(service, { scopes: ['notifications'] })).accessToken;
    acmeEnterprise = (await createClientWithToken(service, { scopes: ['notifications'], enterpriseId: 'acme' })).accessToken;
    const key = await fetch(`${service.url}/v1/me/push-key`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    receiver.expectKey(((await key.json()) as { applicationServerKey: string }).applicationServerKey);
    worker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(worker, 'notification-push worker running');
  });
  afterAll(async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await receiver.close();
    await service.close();
  });

  const subscribe = async (who: 'alice' | 'acmeAlice', name: string): Promise<TestSubscription & { id: string }> => {
    const sub = receiver.subscribe(name);
    const res = await sendJson(`${service.url}/v1/me/push-subscriptions`, 'POST', tokens[who], sub.json);
    expect(res.status).toBe(201);
    return Object.assign(sub, { id: ((await res.json()) as { subscription_id: string }).subscription_id });
  };
  const unsubscribe = async (who: 'alice' | 'acmeAlice', sub: { id: string }) => {
    const res = await fetch(`${service.url}/v1/me/push-subscriptions/${sub.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tokens[who]}` },
    });
    expect([204, 404]).toContain(res.status);
  };
  const notify = async (token = enterprise, overrides: Record<string, unknown> = {}) => {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', token, notificationBody('alice', overrides));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  };
  const queue = () => service.ctx.queues['notification-push'];
  /** The job's result once it completed (or failed for good). */
  const finished = (jobId: string) =>
    eventually(async () => {
      const job = await queue().getJob(jobId);
      return job?.finishedOn ? job : undefined;
    });
  const pushesTo = (sub: TestSubscription) => receiver.received.filter((r) => r.subscription === sub.name);
  const listed = async (who: 'alice' | 'acmeAlice') => {
    const res = await fetch(`${service.url}/v1/me/push-subscriptions`, { headers: { authorization: `Bearer ${tokens[who]}` } });
    return ((await res.json()) as { subscriptions: { subscription_id: string }[] }).subscriptions.map((s) => s.subscription_id);
  };

  test('when a notification is created, then each browser of its user gets one push that decrypts to no content, urgent, kept no longer than the notification; the other enterprise gets nothing', async () => {
    const phone = await subscribe('alice', 'phone');
    const laptop = await subscribe('alice', 'laptop');
    const acme = await subscribe('acmeAlice', 'acme-phone');

    const uuid = await notify(enterprise, { expiresIn: 120 });
    expect((await finished(pushFanoutJobId(uuid))).returnvalue).toEqual({ outcome: 'queued', subscriptions: 2 });
    for (const sub of [phone, laptop]) expect((await finished(pushSendJobId(uuid, sub.id))).returnvalue).toEqual({ outcome: 'sent' });

    for (const sub of [phone, laptop]) {
      const pushes = pushesTo(sub);
      expect(pushes).toHaveLength(1);
      expect(pushes[0]).toMatchObject({ payload: { type: 'notification' }, problems: [], urgency: 'high', status: 201 });
      expect(pushes[0]?.ttl).toBeGreaterThan(100);
      expect(pushes[0]?.ttl).toBeLessThanOrEqual(120);
    }
    // Nothing of the notification (subject, message, id) travels through the push service.
    expect(JSON.stringify(receiver.received)).not.toMatch(/Login request|Approve|accept/);
    expect(JSON.stringify(receiver.received)).not.toContain(uuid);
    expect(pushesTo(acme)).toEqual([]);

    // And the other way round: acme's notification reaches acme's browser only.
    const acmeUuid = await notify(acmeEnterprise);
    expect((await finished(pushSendJobId(acmeUuid, acme.id))).returnvalue).toEqual({ outcome: 'sent' });
    expect(pushesTo(acme)).toHaveLength(1);
    expect(pushesTo(phone)).toHaveLength(1);
    for (const sub of [phone, laptop]) await unsubscribe('alice', sub);
    await unsubscribe('acmeAlice', acme);
  });

  test('when the push service answers 410, then the subscription is deleted and later notifications do not try it', async () => {
    const stale = await subscribe('alice', 'stale');
    stale.script.push(410);
    const uuid = await notify();
    expect((await finished(pushSendJobId(uuid, stale.id))).returnvalue).toEqual({ outcome: 'gone' });
    expect(await listed('alice')).not.toContain(stale.id);

    const next = await notify();
    expect((await finished(pushFanoutJobId(next))).returnvalue).toEqual({ outcome: 'queued', subscriptions: 0 });
    expect(pushesTo(stale).map((p) => p.status)).toEqual([410]);
  });

  test('when the push service answers 500 then 429, then the push is sent again with backoff and the third try is accepted', async () => {
    const flaky = await subscribe('alice', 'flaky');
    flaky.script.push(500, 429);
    const uuid = await notify();
    const job = await finished(pushSendJobId(uuid, flaky.id));
    expect(job.returnvalue).toEqual({ outcome: 'sent' });
    expect(job.attemptsMade).toBe(3);
    expect(pushesTo(flaky).map((p) => p.status)).toEqual([500, 429, 201]);
    // Every try was a valid push for the same browser.
    expect(pushesTo(flaky).every((p) => p.problems.length === 0 && (p.payload as { type: string }).type === 'notification')).toBe(true);
    await unsubscribe('alice', flaky);
  });

  test('when a notification ended before its push ran, then the push is skipped: nothing is sent', async () => {
    const uuid = await notify();
    expect((await finished(pushFanoutJobId(uuid))).returnvalue).toEqual({ outcome: 'queued', subscriptions: 0 });
    const late = await subscribe('alice', 'late');
    expect((await sendJson(`${service.url}/v1/notifications/${uuid}/cancel`, 'POST', enterprise, {})).status).toBe(200);
    // As if the fan-out had run just before the cancel and its send job only now.
    await enqueuePushSends(queue(), uuid, [late.id]);
    expect((await finished(pushSendJobId(uuid, late.id))).returnvalue).toEqual({ outcome: 'skipped' });
    expect(pushesTo(late)).toEqual([]);
    await unsubscribe('alice', late);
  });

  test('when pushes were sent, then the worker counts them by outcome in its metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(/svc_push_sends_total\{outcome="sent"\} [1-9]/);
    expect(text).toMatch(/svc_push_sends_total\{outcome="gone"\} 1/);
    expect(text).toMatch(/svc_push_sends_total\{outcome="retry"\} 2/);
    expect(text).toMatch(/svc_push_sends_total\{outcome="skipped"\} 1/);
  });
});
