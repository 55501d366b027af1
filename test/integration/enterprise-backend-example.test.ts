import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { signCallback } from '../../core/notifications/notification-callback.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientThroughAdminApi } from '../support/auth-helpers.js';
import { eventually, outboxMessageFor } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { spawnProcessEntry, waitForOutput, type WorkerProcess } from '../support/worker-process.js';

/** The example's modules, plain JavaScript an integrator copies: typed here as the test uses them. */
interface EnterpriseClient {
  sendOtp(input: { userId: string }): Promise<string>;
  checkOtp(otpUuid: string, otp: string): Promise<{ status: string; attemptsLeft?: number }>;
  askApproval(input: { userId: string; subject: string; message: string; callbackUrl: string }): Promise<string>;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}
interface ClientModule {
  createEnterpriseClient(options: { baseUrl: string; clientId: string; clientSecret: string; fetchImpl?: typeof fetch }): EnterpriseClient;
}
interface ReceiverModule {
  verifyCallbackSignature(input: { header: unknown; rawBody: Buffer; secrets: string[]; nowSeconds?: number }): boolean;
  createCallbackReceiver(options: { secrets: () => string[]; onCallback: (body: Record<string, unknown>) => Promise<void> }): Server;
}
const example = (file: string) => pathToFileURL(join(projectRoot, 'examples', 'enterprise-backend', file)).href;

describe('the enterprise backend example against the real service', () => {
  let service: TestService;
  let dispatch: RunningWorker;
  let notificationsWorker: WorkerProcess;
  let client: EnterpriseClient;
  let receiverModule: ReceiverModule;
  let callbackSecret: string;
  const tokenRequests: string[] = [];

  beforeAll(async () => {
    service = await startTestService('example-backend', { NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: 'on' });
    dispatch = await startDispatchWorker(service.config, memoryLogger().logger);
    notificationsWorker = spawnProcessEntry('workers/notifications/main.js', service.env);
    await waitForOutput(notificationsWorker, 'notification-callback worker running');
    const registered = await createClientThroughAdminApi(service, { name: 'example bank', scopes: ['otp', 'notifications'] });
    callbackSecret = registered.callbackSecret;
    await insertUser(service.ctx.mongo, { userId: 'alice', mobileNumber: '+15550300001' });
    const { createEnterpriseClient } = (await import(example('enterprise-client.mjs'))) as ClientModule;
    receiverModule = (await import(example('callback-receiver.mjs'))) as ReceiverModule;
    const countingFetch: typeof fetch = (input, init) => {
      if (String(input).endsWith('/oauth/token')) tokenRequests.push(String(input));
      return fetch(input, init);
    };
    client = createEnterpriseClient({
      baseUrl: service.url,
      clientId: registered.clientId,
      clientSecret: registered.clientSecret,
      fetchImpl: countingFetch,
    });
  });
  afterAll(async () => {
    notificationsWorker.child.kill('SIGKILL');
    await notificationsWorker.exited;
    await dispatch.shutdown();
    await service.close();
  });

  test('when the example sends an OTP and checks codes, then a wrong code is FAILED with attempts left, the right one SUCCESS, then USED, on one cached token', async () => {
    const otpUuid = await client.sendOtp({ userId: 'alice' });
    const code = /\b(\d{6})\b/.exec((await outboxMessageFor(service, '+15550300001', otpUuid)).text)?.[1] ?? '';
    const wrong = code === '000000' ? '111111' : '000000';
    expect(await client.checkOtp(otpUuid, wrong)).toMatchObject({ status: 'FAILED', attemptsLeft: 2 });
    expect(await client.checkOtp(otpUuid, code)).toMatchObject({ status: 'SUCCESS', otpUuid });
    expect(await client.checkOtp(otpUuid, code)).toMatchObject({ status: 'USED' });
    expect(tokenRequests).toHaveLength(1);
  });

  test('when a notification the example asked for ends, then its receiver verifies the signed callback and hands it on once; forged, stale and repeated ones are not handed on', async () => {
    const received: Record<string, unknown>[] = [];
    const receiver = receiverModule.createCallbackReceiver({
      secrets: () => [callbackSecret],
      onCallback: async (body) => void received.push(body),
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/svc-callbacks`;
    try {
      const uuid = await client.askApproval({ userId: 'alice', subject: 'Transfer', message: 'Approve 250 EUR to Bob?', callbackUrl });
      expect((await client.call('POST', `/v1/notifications/${uuid}/cancel`)).status).toBe(200);
      await eventually(async () => (received.length > 0 ? true : undefined), 15_000);
      expect(received).toEqual([expect.objectContaining({ notification_uuid: uuid, status: 'CANCELLED' })]);

      const raw = JSON.stringify({ notification_uuid: uuid, status: 'CANCELLED' });
      const now = Math.floor(Date.now() / 1000);
      const post = (signature: string, body = raw) =>
        fetch(callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': signature }, body });
      expect((await post(signCallback('not the secret', raw, now))).status).toBe(401);
      expect((await post(signCallback(callbackSecret, raw, now - 3600))).status).toBe(401);
      expect((await post(signCallback(callbackSecret, raw, now), raw.replace('CANCELLED', 'UPDATED'))).status).toBe(401);
      expect((await post('t=1,v1=zz')).status).toBe(401);
      // Delivered again (its first answer lost): answered, not handed on a second time.
      expect((await post(signCallback(callbackSecret, raw, now))).status).toBe(204);
      expect(received).toHaveLength(1);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test("when a person's OTP budget is spent, then the example does not wait out a long Retry-After: it throws ServiceError with the status and the seconds", async () => {
    await insertUser(service.ctx.mongo, { userId: 'bob', mobileNumber: '+15550300002' });
    for (let i = 0; i < 5; i++) await client.sendOtp({ userId: 'bob' });
    const refused = (await client.sendOtp({ userId: 'bob' }).catch((err: unknown) => err)) as {
      status?: number;
      retryAfterSeconds?: number;
      message?: string;
    };
    expect(refused).toMatchObject({
      status: 429,
      message: expect.stringMatching(/^svc-identity answered 429: Too many requests: retry after \d+ seconds$/),
    });
    expect(refused.retryAfterSeconds).toBeGreaterThan(500);
  });

  test("when the signature is checked, then it is the service's own (signCallback), a second secret is accepted during a switch, and a header without v1 is refused", () => {
    const rawBody = Buffer.from('{"notification_uuid":"n-1","status":"EXPIRED"}');
    const now = 1_800_000_000;
    const header = signCallback('new-secret', rawBody.toString(), now);
    const verify = (secrets: string[], h: unknown = header) =>
      receiverModule.verifyCallbackSignature({ header: h, rawBody, secrets, nowSeconds: now });
    expect(verify(['new-secret'])).toBe(true);
    expect(verify(['old-secret', 'new-secret'])).toBe(true);
    expect(verify(['old-secret'])).toBe(false);
    expect(verify(['new-secret'], `t=${now}`)).toBe(false);
    expect(verify(['new-secret'], null)).toBe(false);
  });
});
