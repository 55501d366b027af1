import { loadConfig } from '../../core/platform/config/config.js';
import { createDeliveriesRepository, REQUEST_NOT_ANSWERED } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries } from '../../core/deliveries/delivery-sweeper.js';
import type { Delivery } from '../../core/deliveries/delivery.types.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { activationDeliveryId } from '../../core/users/activation-deliveries.service.js';
import { startDispatchWorker, type RunningWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, otpBody, postJson, readOutbox } from '../support/otp-helpers.js';
import { startProviderStub, type ProviderStub } from '../support/provider-stub.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

const D1_TIMESTAMP = expect.stringMatching(/^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} UTC \d{4}$/);
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

interface View {
  id: string;
  refId: string;
  to: string;
  state: string;
  provider?: string;
  lastError?: string;
  updatedAt: string;
  replays: number;
}
interface Replayed {
  dryRun: boolean;
  counts: { selected: number; queued: number; skipped: number };
  queued: View[];
  skipped: (Partial<View> & { id: string; skip: { code: string; reason: string } })[];
  more: boolean;
}

const twilioEnv = (baseUrl: string) => ({
  TWILIO_ACCOUNT_SID: `AC${'cd'.repeat(16)}`,
  TWILIO_AUTH_TOKEN: 'replay-test-token',
  TWILIO_FROM: '+15005550006',
  TWILIO_API_BASE_URL: baseUrl,
});

/** The fields of an e-mail row SendGrid refused once (400) and whose sending window is still open. */
const refusedBySendGrid = (notAfter: Date) => ({
  channel: 'EMAIL' as const,
  macros: {},
  lastError: 'Bad Request',
  provider: 'sendgrid',
  attempts: 1,
  notAfter,
  queuedAt: new Date(),
  updatedAt: new Date(),
});

describe('operators list and replay failed deliveries', () => {
  let service: TestService;
  let token: string;
  let stub: ProviderStub;
  let worker: RunningWorker | undefined;
  const mobile = '+15551239876';
  const otpUuids: string[] = [];
  const admin = () => ({ authorization: `Bearer ${service.config.adminToken ?? ''}` });
  const list = (query = '') => fetch(`${service.url}/admin/deliveries${query}`, { headers: admin() });
  const replay = (body: unknown) =>
    fetch(`${service.url}/admin/deliveries/replay`, {
      method: 'POST',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const rows = () => service.ctx.mongo.collection('deliveries');
  const idOf = (otpUuid: string) => `otp-${otpUuid}-SMS`;

  beforeAll(async () => {
    service = await startTestService('admindeliveries', { RATE_LIMIT_OTP_PER_USER: '1000' });
    token = (await createClientWithToken(service, { scopes: ['otp'] })).accessToken;
    await insertUser(service.ctx.mongo, { userId: 'ria', mobileNumber: mobile });
    // Twilio refuses every send, quoting the number (its own wording): each OTP ends FAILED at once.
    stub = await startProviderStub([
      { status: 400, body: { code: 21211, message: `The 'To' number ${mobile} is not a valid phone number.`, status: 400 } },
    ]);
    worker = await startDispatchWorker(loadConfig({ ...service.env, ...twilioEnv(stub.url) }), memoryLogger().logger);
    for (let i = 0; i < 7; i += 1) {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody('ria', { attempts: 1 }));
      otpUuids.push(((await res.json()) as { otpUuid: string }).otpUuid);
    }
    await eventually(async () => ((await rows().countDocuments({ state: 'FAILED' })) === 7 ? true : undefined));
    await worker.shutdown();
    // The provider is "fixed": from now on the worker sends through the outbox.
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
  }, 60000);
  afterAll(async () => {
    await worker?.shutdown();
    await stub.close();
    await service.close();
  });

  test('when failed deliveries are listed, then each shows why and where it failed, masked, without its code', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deliveries: View[]; next?: string };
    expect(body.next).toBeUndefined();
    expect(body.deliveries).toHaveLength(7);
    expect(body.deliveries[0]).toEqual({
      id: expect.stringMatching(/^otp-.*-SMS$/),
      kind: 'otp',
      enterpriseId: 'default',
      refId: expect.any(String),
      channel: 'SMS',
      to: '+*********76',
      template: 'otp_sms',
      state: 'FAILED',
      provider: 'twilio',
      lastError: expect.stringContaining('is not a valid phone number'),
      attempts: 1,
      replays: 0,
      queuedAt: ISO,
      updatedAt: ISO,
      notAfter: ISO,
    });
    const text = JSON.stringify(body);
    expect(text).not.toContain('5551239876');
    expect(text).not.toContain('secretMacros');
    expect(new Set(body.deliveries.map((d) => d.refId))).toEqual(new Set(otpUuids));
    // The latest failure first, ties broken by id.
    const order = body.deliveries.map((d) => [d.updatedAt, d.id].join(' '));
    expect(order).toEqual([...order].sort().reverse());
  });

  test('when a provider refuses a message quoting the address, then the failed job kept in Redis (and shown on the queue dashboard) has it masked', async () => {
    const failed = await service.ctx.queues.dispatch.getFailed();
    expect(failed.length).toBeGreaterThan(0);
    for (const job of failed) {
      expect(job.failedReason).toContain('is not a valid phone number');
      expect(job.failedReason).not.toContain('5551239876');
      expect(JSON.stringify(job.stacktrace)).not.toContain('5551239876');
    }
  });

  test('when the list is read a page at a time, then the pages join up without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const res = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      const body = (await res.json()) as { deliveries: View[]; next?: string };
      seen.push(...body.deliveries.map((d) => d.id));
      cursor = body.next;
      if (!cursor) break;
    }
    const all = ((await (await list()).json()) as { deliveries: View[] }).deliveries.map((d) => d.id);
    expect(seen).toEqual(all);
    expect(((await (await list('?provider=twilio&channel=SMS')).json()) as { deliveries: View[] }).deliveries).toHaveLength(7);
    expect(((await (await list('?provider=sendgrid')).json()) as { deliveries: View[] }).deliveries).toEqual([]);
    expect(((await (await list('?channel=EMAIL')).json()) as { deliveries: View[] }).deliveries).toEqual([]);
    expect(((await (await list('?since=2999-01-01T00:00:00Z')).json()) as { deliveries: View[] }).deliveries).toEqual([]);
  });

  test('when a filter is not valid, then 422 names it', async () => {
    const cases: [string, string][] = [
      ['?state=LOST', 'state'],
      ['?since=yesterday', 'since'],
      ['?since=', 'since'],
      ['?since=2026-11-25T06:00:00', 'since'],
      ['?channel=FAX', 'channel'],
      ['?provider=Twilio!', 'provider'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?cursor=not-a-cursor', 'cursor'],
    ];
    for (const [query, field] of cases) {
      const res = await list(query);
      expect([query, res.status]).toEqual([query, 422]);
      expect(await res.json()).toEqual({
        timestamp: D1_TIMESTAMP,
        status: 422,
        error: 'Invalid data.',
        message: `[Invalid field ${field}]`,
        path: '/admin/deliveries',
      });
    }
  });

  test('when the page is given a filter that is not valid, then it says which, as a page', async () => {
    const res = await fetch(`${service.url}/admin/delivery-replay?since=yesterday&channel=`, { headers: admin() });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; style-src 'nonce-[A-Za-z0-9+/=]+'; img-src 'none'; form-action 'self'/,
    );
    expect(await res.text()).toContain('The since filter is not valid. Write an instant with its zone, such as 2026-11-25T06:00:00Z.');
    const tooMany = await fetch(`${service.url}/admin/delivery-replay/confirm`, {
      method: 'POST',
      headers: { ...admin(), 'content-type': 'application/x-www-form-urlencoded' },
      body: Array.from({ length: 120 }, (_, i) => `ids=d${i}`).join('&'),
    });
    expect(tooMany.status).toBe(413);
    expect(await tooMany.json()).toMatchObject({ status: 413, message: 'Request body has too many fields' });
    const anonymous = await fetch(`${service.url}/admin/delivery-replay`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="svc-identity admin", charset="UTF-8"');
  });

  test('when the page is given a page link that is not valid, then it says so, as a page', async () => {
    const res = await fetch(`${service.url}/admin/delivery-replay?cursor=not-a-cursor`, { headers: admin() });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('This page link is not valid. Open the page again.');
  });

  test('when the admin token is missing, then both routes answer 401', async () => {
    expect((await fetch(`${service.url}/admin/deliveries`)).status).toBe(401);
    const res = await fetch(`${service.url}/admin/deliveries/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"ids":["x"]}',
    });
    expect(res.status).toBe(401);
  });

  test('when a replay body is not valid, then 400, 415 or 422 says what is wrong', async () => {
    const refusals: [unknown, number, string][] = [
      [{ ids: ['a'], filter: {} }, 422, 'Give either ids or filter (not both)'],
      [{ dryRun: false }, 422, 'Give either ids or filter (not both)'],
      [{ ids: [] }, 422, 'Invalid field ids: must NOT have fewer than 1 items'],
      [{ ids: Array.from({ length: 101 }, (_, i) => `id-${i}`) }, 422, 'Invalid field ids: must NOT have more than 100 items'],
      [{ filter: { state: 'SENT' } }, 422, 'Invalid field filter.state: must be equal to constant'],
      [{ ids: ['a'], dryRun: 'no' }, 422, 'Invalid field dryRun: must be boolean'],
      [{ ids: ['a'], force: true }, 422, 'Invalid field force: is not allowed'],
      [[1], 400, 'Malformed request body'],
    ];
    for (const [body, status, message] of refusals) {
      const res = await replay(body);
      expect(await res.json()).toEqual({
        timestamp: D1_TIMESTAMP,
        status,
        error: status === 400 ? 'Bad Request' : 'Invalid data.',
        message,
        path: '/admin/deliveries/replay',
      });
    }
    const plain = await fetch(`${service.url}/admin/deliveries/replay`, {
      method: 'POST',
      headers: { ...admin(), 'content-type': 'text/plain' },
      body: 'ids=a',
    });
    expect(plain.status).toBe(415);
  });

  test('when an OTP ended, expired, or its request was refused, then a dry run skips it saying why and changes nothing', async () => {
    const [locked, expired, unanswered, sentOnce] = otpUuids.slice(3, 7) as [string, string, string, string];
    // A wrong code uses the only attempt: the OTP is LOCKED.
    const wrong = await postJson(`${service.url}/v1/svc-otp/${locked}/validate`, token, { otp: '000000' });
    expect(await wrong.json()).toMatchObject({ attemptsLeft: 0 });
    const past = new Date(Date.now() - 1000);
    await service.ctx.mongo.collection('otps').updateOne({ _id: expired as never }, { $set: { expiresAt: past } });
    await rows().updateOne({ _id: idOf(unanswered) as never }, { $set: { lastError: REQUEST_NOT_ANSWERED } });
    // Sent once, then reported undelivered: the row no longer holds the code.
    await rows().updateOne({ _id: idOf(sentOnce) as never }, { $unset: { secretMacros: 1 } });

    const res = await replay({ filter: { provider: 'twilio' } });
    expect(res.status).toBe(200);
    const result = (await res.json()) as Replayed;
    expect(result.dryRun).toBe(true);
    expect(result.more).toBe(false);
    expect(result.counts).toEqual({ selected: 7, queued: 3, skipped: 4 });
    expect(new Set(result.queued.map((d) => d.refId))).toEqual(new Set(otpUuids.slice(0, 3)));
    const skips = Object.fromEntries(result.skipped.map((s) => [s.refId, s.skip]));
    expect(skips).toEqual({
      [locked]: { code: 'ended', reason: 'Its OTP is locked: no attempts left.' },
      [expired]: { code: 'expired', reason: expect.stringMatching(/^Its OTP expired at /) },
      [unanswered]: { code: 'request-not-answered', reason: 'Its request was answered with an error: nobody holds a code to check.' },
      [sentOnce]: { code: 'code-not-kept', reason: expect.stringContaining('no longer kept') },
    });
    expect(await rows().countDocuments({ state: 'FAILED' })).toBe(7);
    expect(await readOutbox(service, mobile)).toEqual([]);
    const activity = (await (await fetch(`${service.url}/admin/activity`, { headers: admin() })).json()) as {
      activity: { action: string }[];
    };
    expect(activity.activity.filter((e) => e.action === 'deliveries.replayed')).toEqual([]);
  });

  test('when the same deliveries are replayed twice at once, then each is sent once, with its code, and the replay is recorded', async () => {
    const ids = [...otpUuids.slice(0, 3).map(idOf), 'otp-unknown-SMS'];
    const [first, second] = await Promise.all([
      replay({ ids, dryRun: false, comments: 'Twilio number fixed' }),
      replay({ ids, dryRun: false, comments: 'Twilio number fixed' }),
    ]);
    const results = [(await first.json()) as Replayed, (await second.json()) as Replayed];
    // Each delivery was queued by exactly one of the two; the other says why not.
    const queuedIds = results.flatMap((r) => r.queued.map((d) => d.id)).sort();
    expect(queuedIds).toEqual(ids.slice(0, 3).sort());
    for (const r of results) {
      expect(r.skipped.find((s) => s.id === 'otp-unknown-SMS')?.skip).toEqual({ code: 'not-found', reason: 'No such delivery.' });
      for (const s of r.skipped.filter((x) => x.id !== 'otp-unknown-SMS'))
        expect(['not-failed', 'replayed-meanwhile']).toContain(s.skip.code);
    }

    const sent = await eventually(async () => {
      const messages = await readOutbox(service, mobile);
      return messages.length >= 3 ? messages : undefined;
    });
    // The message carries the OTP's own code: the user can still validate with it.
    const message = sent.find((m) => m.otpUuid === otpUuids[0]);
    const code = /\b([0-9]{6})\b/.exec(message?.text ?? '')?.[1];
    const valid = await postJson(`${service.url}/v1/svc-otp/${otpUuids[0]}/validate`, token, { otp: code });
    expect(await valid.json()).toMatchObject({ status: 'SUCCESS' });
    await eventually(async () =>
      (await rows().countDocuments({ _id: { $in: ids.slice(0, 3) as never[] }, state: 'SENT' })) === 3 ? true : undefined,
    );

    // Replayed again once sent: nothing goes out a second time.
    const again = (await (await replay({ ids: ids.slice(0, 3), dryRun: false })).json()) as Replayed;
    expect(again.counts).toEqual({ selected: 3, queued: 0, skipped: 3 });
    expect(again.skipped.map((s) => s.skip.code)).toEqual(['not-failed', 'not-failed', 'not-failed']);
    expect((await readOutbox(service, mobile)).map((m) => m.otpUuid).sort()).toEqual(otpUuids.slice(0, 3).sort());

    const activity = (await (await fetch(`${service.url}/admin/activity`, { headers: admin() })).json()) as {
      activity: Record<string, unknown>[];
    };
    const replays = activity.activity.filter((e) => e.action === 'deliveries.replayed');
    expect(replays).toHaveLength(3);
    const queuedOf = (e: Record<string, unknown>) => (e.replay as { queued: number }).queued;
    expect(replays.reduce((sum, e) => sum + queuedOf(e), 0)).toBe(3);
    expect(replays[0]).toMatchObject({ replay: { selected: 3, queued: 0, skipped: 3 } });
    const withQueued = replays.filter((e) => queuedOf(e) > 0);
    expect(withQueued.flatMap((e) => e.deliveryIds as string[]).sort()).toEqual(ids.slice(0, 3).sort());
    expect(withQueued[0]).toMatchObject({ actor: { type: 'admin' }, comments: 'Twilio number fixed', at: ISO });
  });

  test("when a replay touches the deliveries of two enterprises, then each enterprise's activity lists it with its own counts and ids, and a replay that touched none is recorded without one", async () => {
    const later = new Date(Date.now() + 3600_000);
    const notice = (enterpriseId: string, userId: string, state: Delivery['state']): Delivery => ({
      id: `notice-${enterpriseId}-${userId}-EMAIL`,
      kind: 'notice',
      enterpriseId,
      refId: userId,
      to: `${userId}@example.com`,
      template: 'passkey_added_email',
      state,
      ...refusedBySendGrid(later),
    });
    const acmeFailed = notice('acme', 'al', 'FAILED');
    const acmeSent = notice('acme', 'amy', 'SENT');
    const globexFailed = notice('globex', 'gus', 'FAILED');
    await createDeliveriesRepository(service.ctx.mongo).insertMany([acmeFailed, acmeSent, globexFailed]);

    const result = (await (
      await replay({ ids: [acmeFailed.id, globexFailed.id, acmeSent.id, 'otp-nowhere-SMS'], dryRun: false, comments: 'two banks' })
    ).json()) as Replayed;
    expect(result.queued.map((d) => d.id)).toEqual([acmeFailed.id, globexFailed.id]);
    const nothing = await replay({ ids: ['otp-nowhere-either-SMS'], dryRun: false, comments: 'touched nothing' });
    expect(nothing.status).toBe(200);

    const replaysOf = async (query: string) =>
      (
        (await (await fetch(`${service.url}/admin/activity${query}`, { headers: admin() })).json()) as {
          activity: Record<string, unknown>[];
        }
      ).activity.filter((e) => e.action === 'deliveries.replayed');
    const entry = (enterpriseId: string, replayed: Record<string, number>, deliveryIds: string[]) => ({
      id: expect.any(String),
      at: ISO,
      actor: { type: 'admin' },
      action: 'deliveries.replayed',
      enterpriseId,
      replay: replayed,
      deliveryIds,
      comments: 'two banks',
    });
    expect(await replaysOf('?enterpriseId=acme')).toEqual([entry('acme', { selected: 2, queued: 1, skipped: 1 }, [acmeFailed.id])]);
    expect(await replaysOf('?enterpriseId=globex')).toEqual([entry('globex', { selected: 1, queued: 1, skipped: 0 }, [globexFailed.id])]);
    const untouched = (await replaysOf('')).filter((e) => e.comments === 'touched nothing');
    expect(untouched).toEqual([
      {
        id: expect.any(String),
        at: ISO,
        actor: { type: 'admin' },
        action: 'deliveries.replayed',
        replay: { selected: 1, queued: 0, skipped: 1 },
        deliveryIds: [],
        comments: 'touched nothing',
      },
    ]);
  });

  test('when an activation message failed, then only the current, unexpired code issue of a pending user is replayed', async () => {
    const later = new Date(Date.now() + 3600_000);
    await insertUser(service.ctx.mongo, {
      userId: 'ana@example.com',
      status: 'CREATED',
      emailId: 'ana@example.com',
      activation: { codeDigest: 'x', verificationKeyEncrypted: 'y', issue: 2, expiresAt: later },
    });
    await insertUser(service.ctx.mongo, { userId: 'bo', status: 'ACTIVE', emailId: 'bo@example.com' });
    const row = (userId: string, issue: number): Delivery => ({
      id: activationDeliveryId({ enterpriseId: 'default', userId }, issue, 'EMAIL'),
      kind: 'activation',
      enterpriseId: 'default',
      refId: userId,
      to: `${userId.replace(/@.*/, '')}@example.com`,
      template: 'activation_email',
      secretMacros: 'sealed-code',
      state: 'FAILED',
      ...refusedBySendGrid(later),
    });
    const rowsOf = [row('ana@example.com', 1), row('ana@example.com', 2), row('bo', 1)];
    await createDeliveriesRepository(service.ctx.mongo).insertMany(rowsOf);

    const result = (await (await replay({ ids: rowsOf.map((r) => r.id) })).json()) as Replayed;
    expect(result.queued.map((d) => d.id)).toEqual([rowsOf[1]?.id]);
    expect(result.queued[0]).toMatchObject({ refId: 'a***@example.com', to: 'a***@example.com', provider: 'sendgrid' });
    expect(result.skipped.map((s) => [s.id, s.skip.reason])).toEqual([
      [rowsOf[0]?.id, 'A newer activation code replaced it.'],
      [rowsOf[2]?.id, 'Its user has activated already.'],
    ]);
    expect(JSON.stringify(result)).not.toContain('ana@');
  });

  test('when the sending window of a FAILED row closes, then the sweeper drops the code it kept for a replay', async () => {
    const id = idOf(otpUuids[4] as string);
    expect((await rows().findOne({ _id: id as never }))?.secretMacros).toEqual(expect.any(String));
    await rows().updateOne({ _id: id as never }, { $set: { notAfter: new Date(Date.now() - 1000) } });
    await sweepDeliveries({
      deliveries: createDeliveriesRepository(service.ctx.mongo),
      journal: createSentJournal(service.ctx.redis, service.config.queuePrefix),
      enqueue: async () => false,
      logger: memoryLogger().logger,
      graceMs: 60_000,
    });
    const swept = await rows().findOne({ _id: id as never });
    expect(swept).toMatchObject({ state: 'FAILED', provider: 'twilio' });
    expect(swept?.secretMacros).toBeUndefined();
    // Rows still inside their window keep theirs.
    expect((await rows().findOne({ _id: idOf(otpUuids[3] as string) as never }))?.secretMacros).toEqual(expect.any(String));
  });

  test('when the user of a failed OTP was blocked or deleted since, then a replay skips it and sends them nothing', async () => {
    const blockedMobile = '+15551230001';
    const deletedMobile = '+15551230002';
    await insertUser(service.ctx.mongo, { userId: 'lost-phone', mobileNumber: blockedMobile });
    await insertUser(service.ctx.mongo, { userId: 'left', mobileNumber: deletedMobile });
    // Twilio refuses these two as well: both end FAILED, replayable.
    await worker?.shutdown();
    worker = await startDispatchWorker(loadConfig({ ...service.env, ...twilioEnv(stub.url) }), memoryLogger().logger);
    const failedOtp = async (userId: string) => {
      const res = await postJson(`${service.url}/v1/svc-otp`, token, otpBody(userId));
      return ((await res.json()) as { otpUuid: string }).otpUuid;
    };
    const [ofBlocked, ofDeleted] = [await failedOtp('lost-phone'), await failedOtp('left')];
    await eventually(async () =>
      (await rows().countDocuments({ _id: { $in: [idOf(ofBlocked), idOf(ofDeleted)] as never[] }, state: 'FAILED' })) === 2
        ? true
        : undefined,
    );
    await worker.shutdown();
    worker = await startDispatchWorker(loadConfig(service.env), memoryLogger().logger);
    // Stored as a block or deletion interrupted before it cancelled the user's OTPs (which the
    // lifecycle does next): the replay's own check of the user is what stops these.
    const repositories = service.services.repositories;
    expect(await repositories.users.setBlocked({ enterpriseId: 'default', userId: 'lost-phone' }, true, 'lost phone', new Date())).toBe(
      'changed',
    );
    expect(await repositories.users.markDeleted({ enterpriseId: 'default', userId: 'left' }, new Date())).toBe('deleted');

    const result = (await (await replay({ ids: [idOf(ofBlocked), idOf(ofDeleted)], dryRun: false })).json()) as Replayed;
    expect(result.queued).toEqual([]);
    expect(result.skipped.map((s) => [s.id, s.skip])).toEqual([
      [idOf(ofBlocked), { code: 'ended', reason: 'Its user is blocked.' }],
      [idOf(ofDeleted), { code: 'ended', reason: 'Its user was deleted.' }],
    ]);
    // Nothing was queued, so nothing can reach the outbox later either.
    expect(await rows().countDocuments({ _id: { $in: [idOf(ofBlocked), idOf(ofDeleted)] as never[] }, state: 'FAILED' })).toBe(2);
    expect(await readOutbox(service, blockedMobile)).toEqual([]);
    expect(await readOutbox(service, deletedMobile)).toEqual([]);
  });
});
