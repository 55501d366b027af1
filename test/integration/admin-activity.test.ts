import { jest } from '@jest/globals';
import type { ActivityInput, ActivityRepository } from '../../core/activity/activity.repository.js';
import { sweepOwedEntries } from '../../core/activity/owed-entries-sweeper.js';
import { settleOwedActivity } from '../../core/users/owed-activity.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { createUserLifecycle } from '../../core/users/user-lifecycle.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { createGroups, errorBody, sendJson, userBody } from '../support/users-helpers.js';
import { adminRequest } from '../support/admin-requests.js';
import { requestToken } from '../support/auth-helpers.js';

const ID = expect.stringMatching(/^[0-9a-f]{24}$/) as unknown;
const AT = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) as unknown;

/**
 * The record's appendOnce, held until two settlers have each come to append: both have read what
 * is owed before either writes it, the race the entry ids must make harmless.
 */
function appendsOnceBothHaveRead(real: ActivityRepository): Pick<ActivityRepository, 'appendOnce'> {
  let waiting = 0;
  let release: () => void = () => {};
  const bothRead = new Promise<void>((resolve) => (release = resolve));
  return {
    async appendOnce(...args) {
      waiting += 1;
      if (waiting === 2) release();
      await bothRead;
      return real.appendOnce(...args);
    },
  };
}

/** The activity record: every change to users, clients and templates, readable at GET /admin/activity. */
describe('activity record (GET /admin/activity)', () => {
  let service: TestService;
  let acme: { clientId: string; accessToken: string };
  let globex: { clientId: string; accessToken: string };

  beforeAll(async () => {
    service = await startTestService('adminactivity');
    await createGroups(service, ['retail']);
    acme = await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'acme' });
    globex = await createClientWithToken(service, { scopes: ['users'], enterpriseId: 'globex' });
  });
  afterAll(async () => {
    await service.close();
  });

  const admin = (method: string, path: string, body?: unknown) => adminRequest(service, method, path, body);
  const activity = async (query = '') => {
    const res = await admin('GET', `/admin/activity${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as { activity: Record<string, unknown>[]; next?: string };
  };

  test('when users are enrolled, activated, deleted and re-issued, then each change is recorded with who, when, what and the comments, newest first', async () => {
    expect(
      (
        await sendJson(
          `${service.url}/v1/users`,
          'POST',
          acme.accessToken,
          userBody('rec-1', { predefinedCode: 'REC-CODE', comments: 'maker: ann' }),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await sendJson(`${service.url}/v1/users/activate`, 'POST', undefined, {
          enterpriseId: 'acme',
          userId: 'rec-1',
          activationCode: 'REC-CODE',
        })
      ).status,
    ).toBe(200);
    expect((await sendJson(`${service.url}/v1/users`, 'POST', acme.accessToken, userBody('rec-2'))).status).toBe(201);
    expect((await admin('POST', '/admin/users/rec-2/activation?enterpriseId=acme&comments=lost%20phone')).status).toBe(202);
    const del = await fetch(`${service.url}/v1/users/rec-2?comments=checker%3A%20bob`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${acme.accessToken}` },
    });
    expect(del.status).toBe(204);
    // Deleting again changes nothing, so it records nothing.
    await fetch(`${service.url}/v1/users/rec-2`, { method: 'DELETE', headers: { authorization: `Bearer ${acme.accessToken}` } });
    // A refused change (another enterprise's user) records nothing either.
    expect(
      (await fetch(`${service.url}/v1/users/rec-1`, { method: 'DELETE', headers: { authorization: `Bearer ${globex.accessToken}` } }))
        .status,
    ).toBe(404);

    const page = await activity('?enterpriseId=acme');
    const users = page.activity.filter((e) => e.userId !== undefined);
    expect(users).toEqual([
      {
        id: ID,
        at: AT,
        actor: { type: 'client', clientId: acme.clientId },
        action: 'user.deleted',
        enterpriseId: 'acme',
        userId: 'rec-2',
        comments: 'checker: bob',
      },
      {
        id: ID,
        at: AT,
        actor: { type: 'admin' },
        action: 'user.activation-reissued',
        enterpriseId: 'acme',
        userId: 'rec-2',
        comments: 'lost phone',
      },
      {
        id: ID,
        at: AT,
        actor: { type: 'client', clientId: acme.clientId },
        action: 'user.enrolled',
        enterpriseId: 'acme',
        userId: 'rec-2',
      },
      { id: ID, at: AT, actor: { type: 'user' }, action: 'user.activated', enterpriseId: 'acme', userId: 'rec-1' },
      {
        id: ID,
        at: AT,
        actor: { type: 'client', clientId: acme.clientId },
        action: 'user.enrolled',
        enterpriseId: 'acme',
        userId: 'rec-1',
        comments: 'maker: ann',
      },
    ]);
    expect((await activity('?enterpriseId=acme&userId=rec-1')).activity.map((e) => e.action)).toEqual(['user.activated', 'user.enrolled']);
    expect((await activity('?enterpriseId=globex&userId=rec-1')).activity).toEqual([]);
  });

  test('when an admin unblocks a user who is not blocked or blocks one again for the same reason, then the answers are as before and only changes are recorded (another reason is one)', async () => {
    expect((await sendJson(`${service.url}/v1/users`, 'POST', acme.accessToken, userBody('rec-blk'))).status).toBe(201);
    const block = async (body: { blocked: boolean; reason?: string }) => {
      const res = await admin('PUT', '/admin/users/rec-blk/blocked?enterpriseId=acme', body);
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };

    expect(await block({ blocked: false })).toMatchObject({ userId: 'rec-blk', status: 'CREATED' });
    const first = await block({ blocked: true, reason: 'lost phone' });
    expect(first).toMatchObject({ userId: 'rec-blk', blocked: true, blockedReason: 'lost phone' });
    const again = await block({ blocked: true, reason: 'lost phone' });
    expect(again).toEqual(first);
    expect(await block({ blocked: true, reason: 'stolen phone' })).toMatchObject({ blocked: true, blockedReason: 'stolen phone' });
    expect(await block({ blocked: false })).not.toHaveProperty('blocked');
    expect(await block({ blocked: false })).not.toHaveProperty('blocked');

    const entries = (await activity('?enterpriseId=acme&userId=rec-blk')).activity;
    expect(entries.map((e) => [e.action, e.comments])).toEqual([
      ['user.unblocked', undefined],
      ['user.blocked', 'stolen phone'],
      ['user.blocked', 'lost phone'],
      ['user.enrolled', undefined],
    ]);
  });

  test('when clients and templates are created, changed or deleted by the admin, then the record says so', async () => {
    const created = (await (
      await admin('POST', '/admin/clients', { name: 'audited', scopes: ['otp'], enterpriseId: 'initech', comments: 'ticket 42' })
    ).json()) as { client_id: string };
    expect((await admin('DELETE', `/admin/clients/${created.client_id}?comments=offboarded`)).status).toBe(204);
    expect(
      (await admin('POST', '/admin/templates', { name: 'audited_sms', channel: 'SMS', text: 'Code __SVC_OTP__', comments: 'new brand' }))
        .status,
    ).toBe(201);
    expect((await admin('PUT', '/admin/templates/audited_sms', { channel: 'SMS', text: 'Your code __SVC_OTP__' })).status).toBe(200);

    expect((await activity('?enterpriseId=initech')).activity).toEqual([
      {
        id: ID,
        at: AT,
        actor: { type: 'admin' },
        action: 'client.deleted',
        enterpriseId: 'initech',
        clientId: created.client_id,
        comments: 'offboarded',
      },
      {
        id: ID,
        at: AT,
        actor: { type: 'admin' },
        action: 'client.created',
        enterpriseId: 'initech',
        clientId: created.client_id,
        comments: 'ticket 42',
      },
    ]);
    const latest = (await activity('?limit=2')).activity;
    expect(latest).toEqual([
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'template.updated', templateName: 'audited_sms' },
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'template.created', templateName: 'audited_sms', comments: 'new brand' },
    ]);
    // The comment is not stored on the template itself.
    expect(await (await admin('GET', '/admin/templates/audited_sms')).json()).not.toHaveProperty('comments');
  });

  test('when the admin creates and deletes a group, then the record names the group, and a refused deletion is not recorded', async () => {
    expect((await admin('POST', '/admin/groups', { name: 'audited-group', description: 'Short-lived' })).status).toBe(201);
    expect((await admin('POST', '/admin/groups', { name: 'audited-group' })).status).toBe(409);
    expect((await admin('DELETE', '/admin/groups/audited-group')).status).toBe(204);
    expect((await admin('DELETE', '/admin/groups/audited-group')).status).toBe(404);
    expect((await activity('?limit=2')).activity).toEqual([
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'group.deleted', groupName: 'audited-group' },
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'group.created', groupName: 'audited-group' },
    ]);
  });

  test("when the admin creates and deletes an enterprise's own group, then the record names the group and that enterprise", async () => {
    expect((await admin('POST', '/admin/groups', { name: 'audited-own', enterpriseId: 'audit-acme' })).status).toBe(201);
    expect((await admin('DELETE', '/admin/groups/audited-own?enterpriseId=audit-acme')).status).toBe(204);
    expect((await activity('?limit=2')).activity).toEqual([
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'group.deleted', groupName: 'audited-own', enterpriseId: 'audit-acme' },
      { id: ID, at: AT, actor: { type: 'admin' }, action: 'group.created', groupName: 'audited-own', enterpriseId: 'audit-acme' },
    ]);
  });

  test('when the record is read a page at a time, then pages follow each other without gaps or repeats', async () => {
    const all = (await activity('?limit=500')).activity.map((e) => e.id);
    expect(all.length).toBeGreaterThanOrEqual(8);
    const seen: unknown[] = [];
    let query = '?limit=3';
    for (;;) {
      const page = await activity(query);
      seen.push(...page.activity.map((e) => e.id));
      if (!page.next) break;
      expect(page.activity).toHaveLength(3);
      query = `?limit=3&before=${page.next}`;
    }
    expect(seen).toEqual(all);
  });

  test('when the query is malformed or the admin token is missing, then 422 naming the field, or 401', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?limit=x', 'limit'],
      ['?before=nope', 'before'],
      ['?enterpriseId=a:b', 'enterpriseId'],
      ['?userId=a%20b', 'userId'],
    ]) {
      const res = await admin('GET', `/admin/activity${query}`);
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual(errorBody(422, 'Invalid data.', `[Invalid field ${field}]`, '/admin/activity'));
    }
    const anonymous = await fetch(`${service.url}/admin/activity`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(errorBody(401, 'Unauthorized', 'Invalid or missing admin token', '/admin/activity'));
  });

  describe('when the record cannot be written after a block, unblock or deletion was stored', () => {
    const GRACE_MS = 60_000;
    const A = (userId: string) => ({ enterpriseId: 'acme', userId });
    const failing = {
      append: () => Promise.reject(new Error('MongoDB stepped down')),
      appendOnce: () => Promise.reject(new Error('MongoDB stepped down')),
    };
    /** The real lifecycle of the service's store, with the activity record given (a failing one). */
    const lifecycleWith = (activity: typeof failing | Pick<ActivityRepository, 'append' | 'appendOnce'>, logger = memoryLogger().logger) =>
      createUserLifecycle({
        users: service.services.repositories.users,
        activity,
        discardPendingNotifications: async () => 0,
        endSignIns: async () => {},
        cancelPendingOtps: async () => {},
        logger,
      });
    const sweepDeps = () => ({
      users: service.services.repositories.users,
      activity: service.services.repositories.activity,
      logger: memoryLogger().logger,
      graceMs: GRACE_MS,
    });
    const enroll = async (userId: string) =>
      expect((await sendJson(`${service.url}/v1/users`, 'POST', acme.accessToken, userBody(userId))).status).toBe(201);
    const recordOf = async (userId: string) =>
      (await activity(`?enterpriseId=acme&userId=${userId}`)).activity.map((e) => [e.action, e.comments, e.at]);
    const stored = async (userId: string) => {
      const user = await service.services.repositories.users.findUser(A(userId));
      if (!user) throw new Error(`no user ${userId}`);
      return user;
    };

    test('when the activity record cannot be written after a block, an unblock or a deletion, then the call succeeds with the change stored, its entry stays owed and the log says so without the user', async () => {
      await enroll('owed-ok');
      const { logger, lines } = memoryLogger();
      expect((await lifecycleWith(failing, logger).setBlocked(A('owed-ok'), true, 'lost phone')).blocked?.reason).toBe('lost phone');
      await lifecycleWith(failing, logger).setBlocked(A('owed-ok'), false);
      await lifecycleWith(failing, logger).remove({ clientId: acme.clientId }, A('owed-ok'), 'gone');
      const user = await stored('owed-ok');
      expect(user.status).toBe('DELETED');
      const raw = await service.ctx.mongo.collection('users').findOne({ enterpriseId: 'acme', userId: 'owed-ok' });
      expect((raw?.owedActivity as { action: string }[]).map((e) => e.action)).toEqual(['user.blocked', 'user.unblocked', 'user.deleted']);
      const warnings = lines().filter((line) => String(line.msg).endsWith('activity entry not written; the sweep writes it'));
      expect(warnings.map((line) => String(line.msg).split(':')[0])).toEqual(['user.blocked', 'user.unblocked', 'user.deleted']);
      expect(JSON.stringify(warnings)).not.toContain('owed-ok');
      expect(JSON.stringify(warnings)).not.toContain('lost phone');
    });

    test('when the admin blocks or unblocks again, then the change is recorded once, with its reason and its own time', async () => {
      await enroll('owed-blk');
      await lifecycleWith(failing).setBlocked(A('owed-blk'), true, 'lost phone');
      const blockedAt = (await stored('owed-blk')).blocked?.at.toISOString();
      expect(blockedAt).toEqual(AT);

      expect((await admin('PUT', '/admin/users/owed-blk/blocked?enterpriseId=acme', { blocked: true, reason: 'lost phone' })).status).toBe(
        200,
      );
      expect(await recordOf('owed-blk')).toEqual([
        ['user.blocked', 'lost phone', blockedAt],
        ['user.enrolled', undefined, AT],
      ]);

      await lifecycleWith(failing).setBlocked(A('owed-blk'), false);
      const unblockedAt = (await stored('owed-blk')).updatedAt.toISOString();
      expect((await admin('PUT', '/admin/users/owed-blk/blocked?enterpriseId=acme', { blocked: false })).status).toBe(200);
      expect((await admin('PUT', '/admin/users/owed-blk/blocked?enterpriseId=acme', { blocked: false })).status).toBe(200);
      expect(await recordOf('owed-blk')).toEqual([
        ['user.unblocked', undefined, unblockedAt],
        ['user.blocked', 'lost phone', blockedAt],
        ['user.enrolled', undefined, AT],
      ]);
    });

    test('when the client deletes the user again, then the deletion is recorded once, with its comments, caller and time', async () => {
      await enroll('owed-del');
      await lifecycleWith(failing).remove({ clientId: acme.clientId }, A('owed-del'), 'checker: bob');
      const deletedAt = (await stored('owed-del')).updatedAt.toISOString();
      expect((await stored('owed-del')).status).toBe('DELETED');

      const again = await fetch(`${service.url}/v1/users/owed-del`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${acme.accessToken}` },
      });
      expect(again.status).toBe(204);
      expect(await recordOf('owed-del')).toEqual([
        ['user.deleted', 'checker: bob', deletedAt],
        ['user.enrolled', undefined, AT],
      ]);
      expect((await activity('?enterpriseId=acme&userId=owed-del')).activity[0]).toMatchObject({
        actor: { type: 'client', clientId: acme.clientId },
        enterpriseId: 'acme',
        userId: 'owed-del',
      });
    });

    test('when nobody repeats the change, then the enrollment worker sweep records it once the grace period is over, in its place by time and page', async () => {
      await enroll('owed-swp');
      await lifecycleWith(failing).setBlocked(A('owed-swp'), true, 'stolen phone');
      const blockedAt = (await stored('owed-swp')).blocked?.at.toISOString();
      await lifecycleWith(failing).remove({ clientId: acme.clientId }, A('owed-swp'), 'gone');
      const deletedAt = (await stored('owed-swp')).updatedAt.toISOString();
      // A later change of another user, recorded at once: the late entries go behind it.
      await enroll('owed-later');

      // Within the grace period the API may still be appending: the sweep leaves them.
      await sweepOwedActivity(sweepDeps(), new Date());
      expect(await recordOf('owed-swp')).toEqual([['user.enrolled', undefined, AT]]);

      const later = new Date(Date.now() + GRACE_MS + 1000);
      await sweepOwedActivity(sweepDeps(), later);
      await sweepOwedActivity(sweepDeps(), new Date(later.getTime() + 60 * GRACE_MS));
      expect(await recordOf('owed-swp')).toEqual([
        ['user.deleted', 'gone', deletedAt],
        ['user.blocked', 'stolen phone', blockedAt],
        ['user.enrolled', undefined, AT],
      ]);
      expect(await service.services.repositories.users.findOwedActivity(A('owed-swp'))).toEqual([]);
      // The user owes nothing any more, so it is out of the sweep's sparse index.
      const users = service.ctx.mongo.collection('users');
      expect(await users.findOne({ enterpriseId: 'acme', userId: 'owed-swp' })).not.toHaveProperty('owedActivity');
      expect((await users.indexes()).find((index) => index.key['owedActivity.at'] === 1)).toMatchObject({ sparse: true });
      // Read a page at a time, the late entries come once, each in its place by time.
      const all = (await activity('?enterpriseId=acme&limit=500')).activity;
      expect(all.findIndex((e) => e.userId === 'owed-later')).toBeLessThan(
        all.findIndex((e) => e.action === 'user.deleted' && e.userId === 'owed-swp'),
      );
      const seen: unknown[] = [];
      let query = '?enterpriseId=acme&limit=2';
      for (;;) {
        const page = await activity(query);
        seen.push(...page.activity.map((e) => e.id));
        if (!page.next) break;
        query = `?enterpriseId=acme&limit=2&before=${page.next}`;
      }
      expect(seen).toEqual(all.map((e) => e.id));
    });

    test('when two processes settle what the user owes at once, then the record holds the entry once', async () => {
      await enroll('owed-two');
      await lifecycleWith(failing).setBlocked(A('owed-two'), true, 'two at once');
      // Both settlers read the owed entry before either appends it.
      const held = appendsOnceBothHaveRead(service.services.repositories.activity);
      const stores = { users: service.services.repositories.users, activity: held };
      await Promise.all([settleOwedActivity(stores, A('owed-two')), settleOwedActivity(stores, A('owed-two'))]);
      // And a retry and the sweep on top of them find nothing more to add.
      await Promise.all([
        admin('PUT', '/admin/users/owed-two/blocked?enterpriseId=acme', { blocked: true, reason: 'two at once' }),
        sweepOwedActivity(sweepDeps(), new Date(Date.now() + GRACE_MS + 1000)),
      ]);
      expect((await recordOf('owed-two')).map(([action, comments]) => [action, comments])).toEqual([
        ['user.blocked', 'two at once'],
        ['user.enrolled', undefined],
      ]);
    });
  });

  describe('when the record cannot be written after an admin change to a template, client or group', () => {
    const GRACE_MS = 60_000;
    /** The activity record refuses the entries `refused` matches (a MongoDB blip on its writes). */
    const recordRefuses = (refused: (entry: ActivityInput) => boolean) => {
      const { activity: record } = service.services.repositories;
      const { append, appendOnce } = record;
      const down = () => Promise.reject(new Error('MongoDB stepped down'));
      jest.spyOn(record, 'append').mockImplementation((entry, at) => (refused(entry) ? down() : append(entry, at)));
      jest.spyOn(record, 'appendOnce').mockImplementation((id, entry, at) => (refused(entry) ? down() : appendOnce(id, entry, at)));
    };
    /** The collections the enrollment worker sweeps, as the service built them. */
    const collections = () => {
      const { templates, clients, groups } = service.services.repositories;
      return { templates: templates.owedActivity, clients: clients.owedActivity, groups: groups.owedActivity };
    };
    /** The enrollment worker's sweep of admin changes, at `now`. */
    const sweep = (now: Date) =>
      sweepOwedEntries(
        {
          collections: Object.values(collections()),
          activity: service.services.repositories.activity,
          logger: memoryLogger().logger,
          graceMs: GRACE_MS,
        },
        now,
      );
    const afterGrace = () => new Date(Date.now() + GRACE_MS + 1000);
    const entriesWhere = async (match: Record<string, unknown>) =>
      (await activity('?limit=500')).activity
        .filter((e) => Object.entries(match).every(([field, value]) => e[field] === value))
        .map((e) => [e.action, e.comments]);
    const raw = (collection: string, filter: Record<string, unknown>) => service.ctx.mongo.collection(collection).findOne(filter);
    afterEach(() => jest.restoreAllMocks());

    test('when a template is created, updated and deleted, then each answer is the success, the name is free at once, and the sweep records each change once', async () => {
      recordRefuses((e) => e.templateName === 'owed_tpl');
      const create = () =>
        admin('POST', '/admin/templates', { name: 'owed_tpl', channel: 'SMS', text: 'Code __SVC_OTP__', comments: 'first' });
      expect((await create()).status).toBe(201);
      expect(
        (await admin('PUT', '/admin/templates/owed_tpl', { channel: 'SMS', text: 'Your code __SVC_OTP__', comments: 'wording' })).status,
      ).toBe(200);
      expect((await admin('DELETE', '/admin/templates/owed_tpl')).status).toBe(204);
      // Gone for every read at once, though its entry is still owed.
      expect((await admin('GET', '/admin/templates/owed_tpl')).status).toBe(404);
      expect(((await (await admin('GET', '/admin/templates')).json()) as { name: string }[]).map((t) => t.name)).not.toContain('owed_tpl');
      expect((await admin('PUT', '/admin/templates/owed_tpl', { channel: 'SMS', text: 'x' })).status).toBe(404);
      expect((await admin('DELETE', '/admin/templates/owed_tpl')).status).toBe(404);
      // The name is free at once: created again, as a new template.
      const again = await admin('POST', '/admin/templates', { name: 'owed_tpl', channel: 'SMS', text: 'Again __SVC_OTP__' });
      expect(again.status).toBe(201);
      expect(await again.json()).toMatchObject({ name: 'owed_tpl', version: 1, text: 'Again __SVC_OTP__' });
      expect((await create()).status).toBe(409);
      jest.restoreAllMocks();

      expect(await entriesWhere({ templateName: 'owed_tpl' })).toEqual([]);
      // Within the grace period the API may still be writing them: the sweep leaves them.
      await sweep(new Date());
      expect(await entriesWhere({ templateName: 'owed_tpl' })).toEqual([]);
      await sweep(afterGrace());
      await sweep(new Date(afterGrace().getTime() + 60 * GRACE_MS));
      expect(await entriesWhere({ templateName: 'owed_tpl' })).toEqual([
        ['template.created', undefined],
        ['template.deleted', undefined],
        ['template.updated', 'wording'],
        ['template.created', 'first'],
      ]);
      expect(await raw('templates', { name: 'owed_tpl' })).not.toHaveProperty('owedActivity');
      const indexes = await service.ctx.mongo.collection('templates').indexes();
      expect(indexes.find((index) => index.key['owedActivity.at'] === 1)).toMatchObject({ sparse: true });

      // Deleted with the record working: the entry at once, and the document is gone.
      expect((await admin('DELETE', '/admin/templates/owed_tpl')).status).toBe(204);
      expect((await entriesWhere({ templateName: 'owed_tpl' }))[0]).toEqual(['template.deleted', undefined]);
      expect(await raw('templates', { name: 'owed_tpl' })).toBeNull();
    });

    test('when a template change could not be recorded, then the next change of it records both at once', async () => {
      expect((await admin('POST', '/admin/templates', { name: 'owed_next', channel: 'SMS', text: 'A __SVC_OTP__' })).status).toBe(201);
      recordRefuses((e) => e.templateName === 'owed_next');
      expect((await admin('PUT', '/admin/templates/owed_next', { channel: 'SMS', text: 'B __SVC_OTP__', comments: 'lost' })).status).toBe(
        200,
      );
      jest.restoreAllMocks();
      expect((await admin('PUT', '/admin/templates/owed_next', { channel: 'SMS', text: 'C __SVC_OTP__', comments: 'next' })).status).toBe(
        200,
      );
      expect(await entriesWhere({ templateName: 'owed_next' })).toEqual([
        ['template.updated', 'next'],
        ['template.updated', 'lost'],
        ['template.created', undefined],
      ]);
    });

    test('when a client is created, changed, given new secrets and deleted, then each answer is the success, the deleted client is gone for every lookup, and the sweep records each change once', async () => {
      recordRefuses((e) => e.enterpriseId === 'owedco');
      const created = await admin('POST', '/admin/clients', {
        name: 'owed',
        scopes: ['otp'],
        enterpriseId: 'owedco',
        allowedIps: ['127.0.0.1', '::1'],
        comments: 'ticket 7',
      });
      expect(created.status).toBe(201);
      const { client_id: clientId } = (await created.json()) as { client_id: string };
      expect((await admin('PATCH', `/admin/clients/${clientId}`, { name: 'owed 2', comments: 'renamed' })).status).toBe(200);
      expect((await admin('POST', `/admin/clients/${clientId}/callback-secret`)).status).toBe(200);
      const rotated = await admin('POST', `/admin/clients/${clientId}/secret?graceSeconds=0`);
      expect(rotated.status).toBe(200);
      const { client_secret: clientSecret } = (await rotated.json()) as { client_secret: string };
      expect((await requestToken(service, { clientId, clientSecret })).status).toBe(200);

      expect((await admin('DELETE', `/admin/clients/${clientId}?comments=offboarded`)).status).toBe(204);
      expect((await admin('GET', `/admin/clients/${clientId}`)).status).toBe(404);
      expect(((await (await admin('GET', '/admin/clients')).json()) as { client_id: string }[]).map((c) => c.client_id)).not.toContain(
        clientId,
      );
      expect((await admin('PATCH', `/admin/clients/${clientId}`, { name: 'back' })).status).toBe(404);
      expect((await admin('POST', `/admin/clients/${clientId}/secret`)).status).toBe(404);
      expect((await requestToken(service, { clientId, clientSecret })).status).toBe(401);
      expect(await service.services.repositories.clients.findClientWithSecret(clientId)).toBeNull();
      jest.restoreAllMocks();

      expect(await entriesWhere({ clientId })).toEqual([]);
      await sweep(afterGrace());
      await sweep(afterGrace());
      expect(await entriesWhere({ clientId, enterpriseId: 'owedco' })).toEqual([
        ['client.deleted', 'offboarded'],
        ['client.secret-rotated', undefined],
        ['client.callback-secret-rotated', undefined],
        ['client.updated', 'renamed'],
        ['client.created', 'ticket 7'],
      ]);
      // Its entry written, the deleted client's document is removed.
      expect(await raw('clients', { clientId })).toBeNull();
    });

    test('when a group is created and deleted, then each answer is the success, the name is free at once, and the sweep records each change once', async () => {
      recordRefuses((e) => e.groupName === 'owed-group');
      expect((await admin('POST', '/admin/groups', { name: 'owed-group' })).status).toBe(201);
      expect((await admin('GET', '/admin/groups/owed-group')).status).toBe(200);
      expect((await admin('DELETE', '/admin/groups/owed-group')).status).toBe(204);
      expect((await admin('GET', '/admin/groups/owed-group')).status).toBe(404);
      expect(((await (await admin('GET', '/admin/groups?limit=500')).json()) as { name: string }[]).map((g) => g.name)).not.toContain(
        'owed-group',
      );
      // An enrollment naming it is refused like one naming a group that never was.
      const enrolled = await sendJson(
        `${service.url}/v1/users`,
        'POST',
        acme.accessToken,
        userBody('owed-grp-user', { primaryGroup: 'owed-group' }),
      );
      expect(enrolled.status).toBe(409);
      expect(JSON.stringify(await enrolled.json())).toContain('The group name : owed-group does not exist in the system.');
      expect((await admin('DELETE', '/admin/groups/owed-group')).status).toBe(404);
      expect((await admin('POST', '/admin/groups', { name: 'owed-group', description: 'again' })).status).toBe(201);
      expect(await (await admin('GET', '/admin/groups/owed-group')).json()).toMatchObject({ name: 'owed-group', description: 'again' });
      jest.restoreAllMocks();

      expect(await entriesWhere({ groupName: 'owed-group' })).toEqual([]);
      await sweep(afterGrace());
      expect(await entriesWhere({ groupName: 'owed-group' })).toEqual([
        ['group.created', undefined],
        ['group.deleted', undefined],
        ['group.created', undefined],
      ]);
      expect(await raw('groups', { name: 'owed-group' })).not.toHaveProperty('owedActivity');
    });

    test('when two processes settle what a deleted client owes at once, then the record holds the entry once and the document is removed', async () => {
      recordRefuses((e) => e.enterpriseId === 'owedtwo');
      const created = await admin('POST', '/admin/clients', { name: 'two', scopes: ['otp'], enterpriseId: 'owedtwo' });
      const { client_id: clientId } = (await created.json()) as { client_id: string };
      expect((await admin('DELETE', `/admin/clients/${clientId}`)).status).toBe(204);
      jest.restoreAllMocks();
      // Both settlers read the owed entries before either appends them.
      const held = appendsOnceBothHaveRead(service.services.repositories.activity);
      const { clients } = collections();
      const key = { clientId, enterpriseId: 'owedtwo' };
      await Promise.all([clients.settle(held, key), clients.settle(held, key)]);
      await sweep(afterGrace());
      expect(await entriesWhere({ clientId })).toEqual([
        ['client.deleted', undefined],
        ['client.created', undefined],
      ]);
      expect(await raw('clients', { clientId })).toBeNull();
    });

    test("when a settler died after taking a deleted client's last entry off and before removing it, then the sweep removes the mark once the grace period is over", async () => {
      const created = await admin('POST', '/admin/clients', { name: 'left', scopes: ['otp'], enterpriseId: 'owedleft' });
      const { client_id: clientId } = (await created.json()) as { client_id: string };
      expect((await admin('DELETE', `/admin/clients/${clientId}`)).status).toBe(204);
      // The deletion's mark as that settler left it: entries written and taken off, document not removed.
      await service.ctx.mongo
        .collection('clients')
        .insertOne({ clientId: `${clientId}-left`, enterpriseId: 'owedleft', name: 'left', deletedAt: new Date() });
      expect((await admin('GET', `/admin/clients/${clientId}-left`)).status).toBe(404);
      await sweep(new Date());
      expect(await raw('clients', { clientId: `${clientId}-left` })).not.toBeNull();
      await sweep(afterGrace());
      expect(await raw('clients', { clientId: `${clientId}-left` })).toBeNull();
    });
  });
});
