import { randomBytes } from 'node:crypto';
import { UnrecoverableError, type Job } from 'bullmq';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { encryptSecret } from '../../core/crypto/secret-box.js';
import { enqueueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { enrollmentJobId, type EnrollmentJobData } from '../../core/platform/queues/enrollment.queue.js';
import { sweepActivations } from '../../core/users/activation-sweeper.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { activationDeliveryId, createActivationDeliveries } from '../../core/users/activation-deliveries.service.js';
import { createGroupsRepository } from '../../core/groups/groups.repository.js';
import { createEnrollmentService } from '../../core/users/enrollment.service.js';
import { parseEnrollmentRequest } from '../../core/users/enrollment-request.validator.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { activationsSwept } from '../../core/platform/metrics/business-metrics.js';
import { createSendActivationProcessor } from '../../workers/enrollment/send-activation.processor.js';
import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { eventually, readOutbox } from '../support/otp-helpers.js';
import { memoryLogger, startTestService, warningsIn, type TestService } from '../support/test-service.js';
import { createGroups, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

/** A user of the default enterprise. */
const D = (userId: string) => ({ enterpriseId: 'default', userId });

describe('enrollment job (workers/enrollment) without the worker process', () => {
  let service: TestService;
  let token: string;
  const logs = memoryLogger();

  beforeAll(async () => {
    service = await startTestService('usersenrolljob');
    await createGroups(service, ['retail']);
    token = (await createClientWithToken(service, { scopes: ['users'] })).accessToken;
  });
  afterAll(async () => {
    await service.close();
  });

  const deliveries = () => createDeliveriesRepository(service.ctx.mongo);
  const activationDeliveries = () =>
    createActivationDeliveries({
      users: createUsersRepository(service.ctx.mongo),
      deliveries: deliveries(),
      enqueueDispatch: (id) => enqueueDispatch(service.ctx.queues.dispatch, id),
      keys: otpKeysFromConfig(service.config),
      activationAppUrl: service.config.activationAppUrl,
      logger: logs.logger,
    });
  const sweptCount = async (outcome: string) => (await activationsSwept.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  const job = (data: unknown) => ({ data, attemptsMade: 0, opts: {} }) as unknown as Job<EnrollmentJobData>;

  test('when the job runs twice, then there is one delivery per address and one dispatch job each', async () => {
    const mobileNumber = uniqueMobile();
    expect(
      (await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('twice@x', { emailId: 'twice@example.com', mobileNumber })))
        .status,
    ).toBe(201);
    const processor = createSendActivationProcessor(activationDeliveries());
    expect(await processor(job({ userId: 'twice@x', issue: 1 }))).toEqual({ queued: 2 });
    expect(await processor(job({ userId: 'twice@x', issue: 1 }))).toEqual({ queued: 2 });
    const rows = await deliveries().findByRef('twice@x');
    expect(rows.map((r) => [r.id, r.channel, r.to, r.template, r.state, r.macros])).toEqual([
      [
        activationDeliveryId(D('twice@x'), 1, 'EMAIL'),
        'EMAIL',
        'twice@example.com',
        'activation_email',
        'QUEUED',
        { __FIRST_NAME__: 'Ada', __ENTERPRISE_ID__: 'default', __USER_ID__: 'twice@x' },
      ],
      [
        activationDeliveryId(D('twice@x'), 1, 'SMS'),
        'SMS',
        mobileNumber,
        'activation_sms',
        'QUEUED',
        { __FIRST_NAME__: 'Ada', __ENTERPRISE_ID__: 'default', __USER_ID__: 'twice@x' },
      ],
    ]);
    expect(rows.every((r) => typeof r.secretMacros === 'string' && r.secretMacros.startsWith('v1.'))).toBe(true);
    expect(await service.ctx.queues.dispatch.getJobCountByTypes('waiting', 'delayed', 'active', 'completed', 'failed')).toBe(2);
    const user = await createUsersRepository(service.ctx.mongo).findUser(D('twice@x'));
    expect(user?.activation?.codeEncrypted).toBeUndefined();
  });

  test('when the job of an older issue runs after a re-issue, then nothing is sent for it', async () => {
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('old-issue'))).status).toBe(201);
    const reissue = await fetch(`${service.url}/admin/users/old-issue/activation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.config.adminToken}` },
    });
    expect(reissue.status).toBe(202);
    const processor = createSendActivationProcessor(activationDeliveries());
    expect(await processor(job({ userId: 'old-issue', issue: 1 }))).toEqual({ queued: 0 });
    expect(await processor(job({ userId: 'old-issue', issue: 2 }))).toEqual({ queued: 1 });
    expect((await deliveries().findByRef('old-issue')).map((r) => r.id)).toEqual([activationDeliveryId(D('old-issue'), 2, 'EMAIL')]);
  });

  test('when the payload is invalid, then the job fails without retries', async () => {
    const processor = createSendActivationProcessor(activationDeliveries());
    await expect(processor(job({ userId: 'x', issue: 1, code: 'ABC' }))).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(processor(job({ userId: 'x' }))).rejects.toBeInstanceOf(UnrecoverableError);
  });

  test('when the enrollment job cannot be queued, then the API writes the activation deliveries itself', async () => {
    const users = createUsersRepository(service.ctx.mongo);
    const enrollment = createEnrollmentService({
      users,
      groups: createGroupsRepository(service.ctx.mongo),
      enqueueEnrollment: () => Promise.reject(new Error('Redis is down')),
      activationDeliveries: activationDeliveries(),
      activity: createActivityRepository(service.ctx.mongo),
      keys: otpKeysFromConfig(service.config),
      codeTtlSeconds: 3600,
      logger: logs.logger,
    });
    const request = parseEnrollmentRequest(userBody('no-redis', { emailId: 'noredis@example.com' }));
    expect(await enrollment.enroll({ clientId: 'client-1', enterpriseId: 'default' }, request)).toEqual({ userId: 'no-redis' });
    const rows = await deliveries().findByRef('no-redis');
    expect(rows.map((r) => [r.channel, r.state])).toEqual([['EMAIL', 'QUEUED']]);
    expect(rows[0].notAfter.getTime() - rows[0].queuedAt.getTime()).toBeLessThanOrEqual(3600 * 1000);
    expect(logs.lines().some((l) => l.msg === 'enrollment enqueue failed; preparing activation in-process')).toBe(true);
  });

  test('when the activity record cannot be written after the user was stored, then the enrollment fails and leaves nothing: no user, no activation, and the retry enrolls', async () => {
    const users = createUsersRepository(service.ctx.mongo);
    const activity = createActivityRepository(service.ctx.mongo);
    const queued: unknown[] = [];
    const enrollmentWith = (appendOnce: typeof activity.appendOnce) =>
      createEnrollmentService({
        users,
        groups: createGroupsRepository(service.ctx.mongo),
        // Queued, and the job's work done at once (so no later sweep of this file finds it undone).
        enqueueEnrollment: async (data) => {
          queued.push(data);
          await activationDeliveries().prepareAndQueue(data, data.issue);
        },
        activationDeliveries: activationDeliveries(),
        activity: { appendOnce },
        keys: otpKeysFromConfig(service.config),
        codeTtlSeconds: 3600,
        logger: logs.logger,
      });
    const request = parseEnrollmentRequest(userBody('no-record', { emailId: 'norecord@example.com' }));
    const caller = { clientId: 'client-1', enterpriseId: 'default' };

    await expect(enrollmentWith(() => Promise.reject(new Error('MongoDB stepped down'))).enroll(caller, request)).rejects.toThrow(
      'MongoDB stepped down',
    );
    // The caller was told it failed: no user is left for the activation sweep to send a code to.
    expect(await users.findUser(D('no-record'))).toBeUndefined();
    expect(queued).toEqual([]);

    expect(await enrollmentWith((id, input, at) => activity.appendOnce(id, input, at)).enroll(caller, request)).toEqual({
      userId: 'no-record',
    });
    expect(queued).toEqual([{ enterpriseId: 'default', userId: 'no-record', issue: 1 }]);
    expect(
      (await activity.list({ scope: { enterpriseId: 'default' }, userId: 'no-record', limit: 10 })).entries.map((e) => e.action),
    ).toEqual(['user.enrolled']);
  });

  test('when neither the activity record can be written after the user was stored nor the user removed, then the enrollment fails and the user left is recorded by the sweep, once', async () => {
    const users = createUsersRepository(service.ctx.mongo);
    const activity = createActivityRepository(service.ctx.mongo);
    const down = () => Promise.reject(new Error('MongoDB stepped down'));
    const enrollment = createEnrollmentService({
      // As a process that dies right after storing the user: nothing after the insert happens.
      users: { ...users, removeUndoneEnrollment: down },
      groups: createGroupsRepository(service.ctx.mongo),
      enqueueEnrollment: async () => {},
      activationDeliveries: activationDeliveries(),
      activity: { appendOnce: down },
      keys: otpKeysFromConfig(service.config),
      codeTtlSeconds: 3600,
      logger: memoryLogger().logger,
    });
    const request = parseEnrollmentRequest(
      userBody('left-user', { emailId: 'left@example.com', comments: 'maker: ann', predefinedCode: 'LEFT-CODE' }),
    );
    await expect(enrollment.enroll({ clientId: 'client-1', enterpriseId: 'default' }, request)).rejects.toThrow('MongoDB stepped down');
    // (A predefined code: the user left has no message for the activation sweeps below to send.)
    const left = await users.findUser(D('left-user'));
    expect(left).toBeDefined();

    const sweepDeps = { users, activity, logger: memoryLogger().logger, graceMs: service.config.sweeperGraceMs };
    const afterGrace = new Date(Date.now() + service.config.sweeperGraceMs + 1000);
    for (let i = 0; i < 2; i++) await sweepOwedActivity(sweepDeps, afterGrace);
    expect(
      (await activity.list({ scope: { enterpriseId: 'default' }, userId: 'left-user', limit: 10 })).entries.map((e) => [
        e.action,
        e.actor,
        e.comments,
        e.at,
      ]),
    ).toEqual([['user.enrolled', { type: 'client', clientId: 'client-1' }, 'maker: ann', left?.createdAt]]);
  });

  test('when an enrollment job is lost inside Redis, then the activation sweep prepares and queues the messages', async () => {
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody('lost-job', { emailId: 'lost@example.com' }))).status).toBe(
      201,
    );
    const queued = await service.ctx.queues.enrollment.getJob(enrollmentJobId('default', 'lost-job', 1));
    expect(queued).toBeDefined();
    await queued?.remove();
    const deps = {
      users: createUsersRepository(service.ctx.mongo),
      activationDeliveries: activationDeliveries(),
      logger: logs.logger,
      graceMs: 60000,
    };
    // Within the grace period the job may still be on its way: nothing is done.
    expect(await sweepActivations(deps)).toBe(0);
    expect(await sweepActivations(deps, new Date(Date.now() + 61000))).toBe(1);
    const rows = await deliveries().findByRef('lost-job');
    expect(rows.map((r) => [r.id, r.to, r.state])).toEqual([
      [activationDeliveryId(D('lost-job'), 1, 'EMAIL'), 'lost@example.com', 'QUEUED'],
    ]);
    expect(await service.ctx.queues.dispatch.getJob(activationDeliveryId(D('lost-job'), 1, 'EMAIL'))).toBeDefined();
    // Prepared once: the next sweep finds nothing left to do.
    expect(await sweepActivations(deps, new Date(Date.now() + 61000))).toBe(0);
  });

  test("when one user's activation cannot be prepared, then the sweep prepares the others, logs it without the user id and leaves it for later", async () => {
    for (const userId of ['kim-broken', 'lee-after-broken'])
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId))).status).toBe(201);
    // Its code no longer decrypts (sealed with a key since lost), and it comes first in the sweep's order.
    const lostKeySealed = encryptSecret('K7PQ2XMA', randomBytes(32), 'default:kim-broken:1');
    await service.ctx.mongo
      .collection('users')
      .updateOne(
        { enterpriseId: 'default', userId: 'kim-broken' },
        { $set: { 'activation.codeEncrypted': lostKeySealed, updatedAt: new Date(Date.now() - 3600_000) } },
      );
    const captured = memoryLogger();
    const deps = {
      users: createUsersRepository(service.ctx.mongo),
      activationDeliveries: activationDeliveries(),
      logger: captured.logger,
      graceMs: 60000,
    };
    const failedBefore = await sweptCount('failed');
    const later = new Date(Date.now() + 61000);

    expect(await sweepActivations(deps, later)).toBe(1);
    expect((await deliveries().findByRef('lee-after-broken')).map((r) => r.id)).toEqual([
      activationDeliveryId(D('lee-after-broken'), 1, 'EMAIL'),
    ]);
    expect(await deliveries().findByRef('kim-broken')).toEqual([]);
    expect(captured.lines().filter((l) => l.msg === 'activation sweep could not prepare an activation; tried again later')).toEqual([
      expect.objectContaining({ enterpriseId: 'default', enrollmentJobId: 'enroll-***-1', failures: 1 }),
    ]);
    expect(JSON.stringify(captured.lines())).not.toContain('kim-broken');
    expect(await sweptCount('failed')).toBe(failedBefore + 1);

    // The next passes do not start with it again at once; after its back-off it is tried again.
    expect(await sweepActivations(deps, new Date(later.getTime() + 15000))).toBe(0);
    expect(await sweptCount('failed')).toBe(failedBefore + 1);
    expect(await sweepActivations(deps, new Date(later.getTime() + 61000))).toBe(0);
    expect(await sweptCount('failed')).toBe(failedBefore + 2);
  });

  test('when an activation message cannot be queued, then the warning names its delivery without the user id, in clear or encoded', async () => {
    const userId = 'dana.lee@example.com';
    expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId, { emailId: 'dana@example.com' }))).status).toBe(201);
    const captured = memoryLogger();
    const withoutRedis = createActivationDeliveries({
      users: createUsersRepository(service.ctx.mongo),
      deliveries: deliveries(),
      enqueueDispatch: () => Promise.reject(new Error('Redis is down')),
      keys: otpKeysFromConfig(service.config),
      activationAppUrl: service.config.activationAppUrl,
      logger: captured.logger,
    });
    expect(await withoutRedis.prepareAndQueue(D(userId), 1)).toEqual({ queued: [] });
    const warnings = warningsIn(captured.lines());
    expect(warnings).toEqual([expect.stringContaining('dispatch enqueue failed; left for the sweeper')]);
    for (const clear of ['dana.lee', Buffer.from(userId).toString('base64url')]) expect(warnings[0]).not.toContain(clear);
    expect(captured.lines()[0]).toMatchObject({ deliveryId: 'activation-***-1-EMAIL' });
  });

  test('when the user is deleted, blocked or given a new code while the activation messages wait to be sent, then those messages are never sent', async () => {
    const admin = { authorization: `Bearer ${service.config.adminToken}` };
    const ends: Record<string, () => Promise<Response>> = {
      'ends-deleted': () =>
        fetch(`${service.url}/v1/users/ends-deleted`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }),
      'ends-blocked': () =>
        sendJson(`${service.url}/admin/users/ends-blocked/blocked`, 'PUT', service.config.adminToken, { blocked: true }),
      'ends-reissued': () => fetch(`${service.url}/admin/users/ends-reissued/activation`, { method: 'POST', headers: admin }),
    };
    const processor = createSendActivationProcessor(activationDeliveries());
    for (const userId of Object.keys(ends)) {
      expect((await sendJson(`${service.url}/v1/users`, 'POST', token, userBody(userId))).status).toBe(201);
      // The enrollment job ran: its message waits in the dispatch queue (no dispatch worker yet).
      expect(await processor(job({ userId, issue: 1 }))).toEqual({ queued: 1 });
    }
    for (const end of Object.values(ends)) expect((await end()).status).toBeLessThan(300);

    const worker = await startDispatchWorker(service.config, memoryLogger().logger);
    try {
      const rows = await eventually(async () => {
        const ended = await Promise.all(
          Object.keys(ends).map(async (userId) => deliveries().findById(activationDeliveryId(D(userId), 1, 'EMAIL'))),
        );
        return ended.every((row) => row !== undefined && row.state !== 'QUEUED') ? ended : undefined;
      });
      expect(rows.map((row) => [row?.refId, row?.state, row?.lastError, row?.secretMacros])).toEqual([
        ['ends-deleted', 'FAILED', 'cancelled before it could be sent', undefined],
        ['ends-blocked', 'FAILED', 'cancelled before it could be sent', undefined],
        ['ends-reissued', 'FAILED', 'cancelled before it could be sent', undefined],
      ]);
      for (const userId of Object.keys(ends)) expect(await readOutbox(service, `${userId}@example.com`)).toEqual([]);
    } finally {
      await worker.shutdown();
    }
  });
});
