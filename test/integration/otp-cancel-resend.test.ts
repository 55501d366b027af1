import type { Job } from 'bullmq';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { otpDeliveryId, otpResendDeliveryId } from '../../core/deliveries/delivery.types.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { createSentOutcomes } from '../../core/deliveries/sent-outcomes.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createOtpsRepository } from '../../core/otp/otps.repository.js';
import { createResendCodeSweeper } from '../../core/otp/resend-code-sweeper.js';
import type { DispatchJobData } from '../../core/platform/queues/dispatch.queue.js';
import { createDispatchProcessor } from '../../workers/dispatch/dispatch.processor.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson, readOutbox } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody } from '../support/users-helpers.js';

interface StatusBody {
  otpUuid: string;
  status: string;
  deliveries: { channel: string; resend?: number; state: string; lastError?: string }[];
}

describe('Cancel and resend an OTP', () => {
  let service: TestService;
  let token: string;
  let otherToken: string;
  let users = 0;

  beforeAll(async () => {
    service = await startTestService('otpcancel', { RATE_LIMIT_OTP_PER_USER: '3', RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    otherToken = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  /** A user of its own (the per-user budget is small in this file), with a mobile and an e-mail. */
  async function newUser(): Promise<{ userId: string; mobile: string; email: string }> {
    users += 1;
    const user = { userId: `cr-${users}`, mobile: `+1555123${String(users).padStart(4, '0')}`, email: `cr-${users}@example.com` };
    await insertUser(service.ctx.mongo, { userId: user.userId, mobileNumber: user.mobile, emailId: user.email });
    return user;
  }

  async function generate(userId: string, overrides: Record<string, unknown> = {}, bearer = token): Promise<string> {
    const res = await postJson(`${service.url}/v1/svc-otp`, bearer, otpBody(userId, overrides));
    expect(res.status).toBe(200);
    return ((await res.json()) as { otpUuid: string }).otpUuid;
  }

  const cancel = (otpUuid: string, bearer = token) =>
    fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { method: 'DELETE', headers: { authorization: `Bearer ${bearer}` } });
  const resend = (otpUuid: string, headers: Record<string, string> = {}, bearer = token) =>
    fetch(`${service.url}/v1/svc-otp/${otpUuid}/resend`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, ...headers } });
  const validate = (otpUuid: string, otp: string) => postJson(`${service.url}/v1/svc-otp/${otpUuid}/validate`, token, { otp });
  const status = async (otpUuid: string) =>
    (await (await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { headers: { authorization: `Bearer ${token}` } })).json()) as StatusBody;

  /** The dispatch processor on this file's stores, with providers that keep what they are given. */
  function recordingProcessor() {
    const sends: { to: string; text: string }[] = [];
    const keep = async (message: { to: string; text: string }) => {
      sends.push(message);
      return { providerMessageId: `SM${sends.length}` };
    };
    const rows = createDeliveriesRepository(service.ctx.mongo);
    const processor = createDispatchProcessor({
      deliveries: rows,
      sent: createSentOutcomes({
        journal: createSentJournal(service.ctx.redis, service.config.queuePrefix),
        deliveries: rows,
        logger: memoryLogger().logger,
      }),
      findTemplate: (name, enterpriseId) => service.services.templateCache.find(name, enterpriseId),
      rereadTemplate: (name, enterpriseId) => service.services.templateCache.reread(name, enterpriseId),
      otpStatus: (otpUuid) => createOtpsRepository(service.ctx.mongo).statusOf(otpUuid),
      providers: { sms: { name: 'outbox', send: keep }, email: { name: 'outbox', send: keep } },
      encryptionKey: otpKeysFromConfig(service.config).encryptionKey,
      logger: memoryLogger().logger,
    });
    const run = async (deliveryId: string) => {
      const job = await service.ctx.queues.dispatch.getJob(deliveryId);
      if (!job) throw new Error(`no dispatch job ${deliveryId}`);
      return processor(job as Job<DispatchJobData>);
    };
    return { run, sends };
  }

  const codeIn = (text: string) => /(\d{6})/.exec(text)?.[1] ?? '';

  describe('users blocked or deleted while an OTP is pending', () => {
    test('when the user is blocked, or deleted by the enterprise, then their ACTIVE OTPs are cancelled: the waiting message is never sent and the code is refused', async () => {
      const usersToken = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
      const ends = {
        blocked: (userId: string) =>
          fetch(`${service.url}/admin/users/${userId}/blocked`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({ blocked: true, reason: 'lost phone' }),
          }),
        deleted: (userId: string) =>
          fetch(`${service.url}/v1/users/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${usersToken}` } }),
      };
      for (const [how, end] of Object.entries(ends)) {
        const { userId } = await newUser();
        const otpUuid = await generate(userId);
        expect([200, 204]).toContain((await end(userId)).status);
        const { run, sends } = recordingProcessor();
        await expect(run(`otp-${otpUuid}-SMS`)).resolves.toEqual({ state: 'SKIPPED', reason: 'cancelled' });
        expect({ how, sends }).toEqual({ how, sends: [] });
        expect(await status(otpUuid)).toMatchObject({
          status: 'CANCELLED',
          deliveries: [expect.objectContaining({ state: 'FAILED', lastError: 'cancelled before it could be sent' })],
        });
        expect((await validate(otpUuid, '123456')).status).toBe(410);
      }
    });

    test("when a blocked user has two pending OTPs, then the waiting messages of both end unsent; another user's OTP keeps its own", async () => {
      const { userId } = await newUser();
      const other = await newUser();
      const pending = [await generate(userId), await generate(userId, { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } })];
      const untouched = await generate(other.userId);
      const blocked = await fetch(`${service.url}/admin/users/${userId}/blocked`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${service.config.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ blocked: true, reason: 'lost phone' }),
      });
      expect([200, 204]).toContain(blocked.status);
      const cancelledRow = expect.objectContaining({ state: 'FAILED', lastError: 'cancelled before it could be sent' });
      expect(await status(pending[0] as string)).toMatchObject({ status: 'CANCELLED', deliveries: [cancelledRow] });
      expect(await status(pending[1] as string)).toMatchObject({ status: 'CANCELLED', deliveries: [cancelledRow, cancelledRow] });
      expect(await status(untouched)).toMatchObject({ status: 'ACTIVE', deliveries: [expect.objectContaining({ state: 'QUEUED' })] });
    });
  });

  describe('DELETE /v1/svc-otp/{otpUuid}', () => {
    test('when an ACTIVE OTP is cancelled, then 200 shows CANCELLED, its waiting message is never sent and the code is refused with 410', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const res = await cancel(otpUuid);
      expect(res.status).toBe(200);
      const body = (await res.json()) as StatusBody;
      expect(body).toMatchObject({ otpUuid, status: 'CANCELLED' });
      expect(body.deliveries).toEqual([
        expect.objectContaining({ channel: 'SMS', state: 'FAILED', lastError: 'cancelled before it could be sent' }),
      ]);
      // The job was still waiting, its row sealed in it: the worker's check before the send stops it.
      const { run, sends } = recordingProcessor();
      await expect(run(`otp-${otpUuid}-SMS`)).resolves.toEqual({ state: 'SKIPPED', reason: 'cancelled' });
      expect(sends).toEqual([]);
      const refused = await validate(otpUuid, '123456');
      expect(refused.status).toBe(410);
      expect(await refused.json()).toEqual(
        errorBody(410, 'Gone', 'OTP cancelled', `/v1/svc-otp/${otpUuid}/validate`, { otpUuid, status: 'CANCELLED' }),
      );
    });

    test('when the cancel lands between the row read and the send, then the worker still does not hand the message over', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      // The job carries its row sealed: the worker never reads the row, only the OTP's status.
      const cancelled = await createOtpsRepository(service.ctx.mongo).cancel(otpUuid, 'nobody', new Date());
      expect(cancelled).toBeUndefined(); // another client's cancel changes nothing
      const { run, sends } = recordingProcessor();
      const job = await service.ctx.queues.dispatch.getJob(`otp-${otpUuid}-SMS`);
      expect(job?.data.sealed).toEqual(expect.any(String));
      // Cancelled in the store directly, leaving the row QUEUED: only the worker's check can stop it.
      const Otps = createOtpsRepository(service.ctx.mongo);
      const clientOf = (await service.ctx.mongo.collection('otps').findOne({ _id: otpUuid as never }))?.clientId as string;
      expect(await Otps.cancel(otpUuid, clientOf, new Date())).toMatchObject({ status: 'CANCELLED' });
      await expect(run(`otp-${otpUuid}-SMS`)).resolves.toEqual({ state: 'SKIPPED', reason: 'cancelled' });
      expect(sends).toEqual([]);
      const { deliveries } = await status(otpUuid);
      expect(deliveries).toEqual([expect.objectContaining({ state: 'FAILED', lastError: 'cancelled before it could be sent' })]);
      // No provider had it: the row names none, as the rows the cancel itself ends do.
      expect(deliveries[0]).not.toHaveProperty('provider');
    });

    test('when a message was already handed to the provider, then cancelling leaves it SENT', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const { run, sends } = recordingProcessor();
      await expect(run(`otp-${otpUuid}-SMS`)).resolves.toMatchObject({ state: 'SENT' });
      expect(sends).toHaveLength(1);
      const res = await cancel(otpUuid);
      expect(res.status).toBe(200);
      const body = (await res.json()) as StatusBody;
      expect(body.status).toBe('CANCELLED');
      expect(body.deliveries).toEqual([expect.objectContaining({ channel: 'SMS', state: 'SENT', providerMessageId: 'SM1' })]);
    });

    test('when an OTP is cancelled twice, then the second answer is 200 with the same state', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const first = await cancel(otpUuid);
      const again = await cancel(otpUuid);
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(await again.json()).toEqual(await first.json());
    });

    test('when cancels race, then every one answers 200 CANCELLED', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const answers = await Promise.all(Array.from({ length: 5 }, () => cancel(otpUuid)));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect((await status(otpUuid)).status).toBe('CANCELLED');
    });

    test('when the OTP already ended as USED, EXPIRED or LOCKED, then cancelling is 409 with its state', async () => {
      const { userId } = await newUser();
      const { run, sends } = recordingProcessor();
      const used = await generate(userId);
      await run(`otp-${used}-SMS`);
      expect((await validate(used, codeIn(sends[0]?.text ?? ''))).status).toBe(200);
      const res = await cancel(used);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(
        errorBody(409, 'Conflict', 'OTP already ended: USED', `/v1/svc-otp/${used}`, { otpUuid: used, status: 'USED' }),
      );

      const locked = await generate(userId, { attempts: 1 });
      expect((await validate(locked, 'not-it')).status).toBe(422);
      expect(await (await cancel(locked)).json()).toMatchObject({ status: 'LOCKED', message: 'OTP already ended: LOCKED' });

      const expiring = await generate(userId, { expiresIn: 15 });
      await service.ctx.mongo
        .collection('otps')
        .updateOne({ _id: expiring as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const expired = await cancel(expiring);
      expect(expired.status).toBe(409);
      expect(await expired.json()).toMatchObject({ status: 'EXPIRED' });
    });

    test('when another client or an unknown uuid is named, then 404 OTP not found and the OTP stays ACTIVE', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const foreign = await cancel(otpUuid, otherToken);
      expect(foreign.status).toBe(404);
      expect(await foreign.json()).toEqual(errorBody(404, 'Not Found', 'OTP not found', `/v1/svc-otp/${otpUuid}`));
      expect((await cancel('not-a-uuid')).status).toBe(404);
      expect((await cancel('0b9d5f7e-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await status(otpUuid)).status).toBe('ACTIVE');
    });

    test('when the token is missing or lacks the otp scope, then 401 / 403', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      expect((await fetch(`${service.url}/v1/svc-otp/${otpUuid}`, { method: 'DELETE' })).status).toBe(401);
      const usersOnly = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
      expect((await cancel(otpUuid, usersOnly)).status).toBe(403);
    });
  });

  describe('POST /v1/svc-otp/{otpUuid}/resend', () => {
    test('when an ACTIVE OTP is resent, then the same code goes to the same channels and the status lists the new deliveries', async () => {
      const { userId, mobile, email } = await newUser();
      const otpUuid = await generate(userId, { dispatchOptions: { SMS: 'otp_sms', EMAIL: 'otp_email' } });
      const { run, sends } = recordingProcessor();
      await run(`otp-${otpUuid}-SMS`);
      await run(`otp-${otpUuid}-EMAIL`);
      const res = await resend(otpUuid);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe(
        '"otp-per-client";q=1000;w=60, "otp-per-enterprise";q=5000;w=60, "otp-per-user";q=3;w=600',
      );
      const body = (await res.json()) as StatusBody;
      expect(body.status).toBe('ACTIVE');
      expect(body.deliveries.map((d) => [d.channel, d.resend, d.state])).toEqual([
        ['EMAIL', undefined, 'SENT'],
        ['SMS', undefined, 'SENT'],
        ['EMAIL', 1, 'QUEUED'],
        ['SMS', 1, 'QUEUED'],
      ]);
      const ids = (await createDeliveriesRepository(service.ctx.mongo).findByRef(otpUuid)).map((row) => row.id).slice(2);
      for (const id of ids) await expect(run(id)).resolves.toMatchObject({ state: 'SENT' });
      expect(sends.map((s) => s.to)).toEqual([mobile, email, email, mobile]);
      const codes = sends.map((s) => codeIn(s.text));
      expect(new Set(codes).size).toBe(1);
      // The code is stored encrypted only: neither the OTP record nor the rows hold it in clear.
      const stored = JSON.stringify(await service.ctx.mongo.collection('otps').findOne({ _id: otpUuid as never }));
      const rows = JSON.stringify(await service.ctx.mongo.collection('deliveries').find({ refId: otpUuid }).toArray());
      expect(stored).not.toContain(codes[0]);
      expect(rows).not.toContain(codes[0]);
      expect((await validate(otpUuid, codes[0] as string)).status).toBe(200);
      // Used: the encrypted copy kept for resends is gone too.
      expect(await service.ctx.mongo.collection('otps').findOne({ _id: otpUuid as never })).not.toHaveProperty('resendCode');
    });

    test('when the OTP is not ACTIVE, then resending is 409 with its state and uses no limit', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      expect((await cancel(otpUuid)).status).toBe(200);
      const res = await resend(otpUuid);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(
        errorBody(409, 'Conflict', 'OTP cannot be resent: it is CANCELLED', `/v1/svc-otp/${otpUuid}/resend`, {
          otpUuid,
          status: 'CANCELLED',
        }),
      );
      // Two of three points left: the refused resend took none.
      const next = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));
      expect(next.headers.get('ratelimit')).toMatch(/"otp-per-user";r=1;/);
    });

    test('when the per-user budget is spent, then resending is 429 with Retry-After and RateLimit headers', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      expect((await resend(otpUuid)).status).toBe(200);
      expect((await resend(otpUuid)).status).toBe(200);
      const refused = await resend(otpUuid);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(/^"otp-per-user";r=0;t=\d+$/);
      expect(await refused.json()).toMatchObject({ status: 429, error: 'Too Many Requests' });
      expect((await status(otpUuid)).deliveries.map((d) => d.resend)).toEqual([undefined, 1, 2]);
    });

    test('when a resend is retried with the same Idempotency-Key, then nothing more is sent and the answer says it was replayed', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const key = { 'Idempotency-Key': `resend-${otpUuid}` };
      const answers = await Promise.all([resend(otpUuid, key), resend(otpUuid, key)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const again = await resend(otpUuid, key);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(((await again.json()) as StatusBody).deliveries.map((d) => d.resend)).toEqual([undefined, 1]);
      // The same key for another request is refused.
      const other = await generate(userId);
      const reused = await resend(other, key);
      expect(reused.status).toBe(422);
      expect(await reused.json()).toMatchObject({ message: 'Idempotency-Key was already used with a different request' });
      expect((await resend(otpUuid, { 'Idempotency-Key': 'bad key' })).status).toBe(422);
    });

    test('when a keyed resend was recorded but its row and job were not written, then a retry with the key writes and queues them and sends the same code', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      const key = { 'Idempotency-Key': `resend-lost-row-${otpUuid}` };
      expect((await resend(otpUuid, key)).status).toBe(200);
      const resendId = String((await service.ctx.mongo.collection('otps').findOne({ _id: otpUuid as never }))?.resends[0]);
      const resendRow = otpResendDeliveryId(otpUuid, 'SMS', resendId);
      // As if the process stopped between recording the resend and writing what it sends.
      expect((await service.ctx.mongo.collection('deliveries').deleteOne({ _id: resendRow as never })).deletedCount).toBe(1);
      await (await service.ctx.queues.dispatch.getJob(resendRow))?.remove();

      const retry = await resend(otpUuid, key);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect((await status(otpUuid)).deliveries.map((d) => [d.resend, d.state])).toEqual([
        [undefined, 'QUEUED'],
        [1, 'QUEUED'],
      ]);
      // A retry's job may repeat one already done, so it travels unsealed: the worker reads the row.
      expect((await service.ctx.queues.dispatch.getJob(resendRow))?.data.sealed).toBeUndefined();
      const { run, sends } = recordingProcessor();
      await run(otpDeliveryId(otpUuid, 'SMS'));
      await run(resendRow);
      expect(sends.map((sent) => codeIn(sent.text))).toEqual([expect.stringMatching(/^\d{6}$/), codeIn(sends[0]?.text ?? '')]);
    });

    test('when another client or an unknown uuid is named, then 404', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      expect((await resend(otpUuid, {}, otherToken)).status).toBe(404);
      expect((await resend('0b9d5f7e-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await status(otpUuid)).deliveries).toHaveLength(1);
    });

    test('when an OTP made before resends existed is resent, then 409 explains it', async () => {
      const { userId } = await newUser();
      const otpUuid = await generate(userId);
      await service.ctx.mongo.collection('otps').updateOne({ _id: otpUuid as never }, { $unset: { resendCode: 1 } });
      const res = await resend(otpUuid);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({
        status: 'ACTIVE',
        message: 'OTP cannot be resent: it was generated before resends were possible',
      });
    });

    test('when an OTP expires, then the sweeper drops its resend copy of the code and a resend is 409 EXPIRED', async () => {
      const { userId } = await newUser();
      const expiring = await generate(userId);
      const live = await generate(userId);
      const otps = service.ctx.mongo.collection('otps');
      await otps.updateOne({ _id: expiring as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const sweep = createResendCodeSweeper(createOtpsRepository(service.ctx.mongo), memoryLogger().logger);
      expect(await sweep()).toBeGreaterThanOrEqual(1);
      expect(await otps.findOne({ _id: expiring as never })).not.toHaveProperty('resendCode');
      expect(await otps.findOne({ _id: live as never })).toHaveProperty('resendCode');
      // A second sweep looks only at what expired since the first.
      expect(await sweep()).toBe(0);
      const res = await resend(expiring);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ status: 'EXPIRED', message: 'OTP cannot be resent: it is EXPIRED' });
    });

    test('when the dispatch worker runs, then the resent message reaches the outbox with the first code', async () => {
      const { userId, mobile } = await newUser();
      const worker: RunningWorker = await startDispatchWorker(service.config, memoryLogger().logger);
      try {
        const otpUuid = await generate(userId);
        const first = await eventually(async () => (await readOutbox(service, mobile)).find((m) => m.otpUuid === otpUuid));
        expect((await resend(otpUuid)).status).toBe(200);
        const both = await eventually(async () => {
          const mine = (await readOutbox(service, mobile)).filter((m) => m.otpUuid === otpUuid);
          return mine.length === 2 ? mine : undefined;
        });
        expect(both.map((m) => codeIn(m.text))).toEqual([codeIn(first.text), codeIn(first.text)]);
        const states = await eventually(async () => {
          const body = await status(otpUuid);
          return body.deliveries.every((d) => d.state === 'SENT') ? body.deliveries : undefined;
        });
        expect(states.map((d) => d.resend)).toEqual([undefined, 1]);
      } finally {
        await worker.shutdown();
      }
    });
  });
});
