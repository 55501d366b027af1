import sharp from 'sharp';
import { enrollmentJobId } from '../../core/platform/queues/enrollment.queue.js';
import { ConflictError, UnavailableError } from '../../core/platform/errors/app-error.js';
import { deleteGroup } from '../../core/users/group-deletion.service.js';
import { createUserUpdateService } from '../../core/users/user-update.service.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import { startFaceAnalyzerStub } from '../support/face-analyzer-stub.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { eventually } from '../support/waiting.js';
import { createGroups, errorBody, sendJson, uniqueMobile, userBody } from '../support/users-helpers.js';

/**
 * A group deletion racing an enrollment or a PATCH that names the group: one of the two always
 * fails, and no live user is left naming a group that no longer exists. Each race is forced step
 * by step (the face analyzer holds the enrollment; the PATCH's group check runs the deletion), not
 * left to timing.
 */
describe('group deletion racing enrollment and PATCH', () => {
  let service: TestService;
  let analyzer: Awaited<ReturnType<typeof startFaceAnalyzerStub>>;
  let token: string;
  let selfie: string;
  let n = 0;
  const nextId = (label = 'race') => `${label}${++n}`;
  const enterpriseId = 'acme';

  beforeAll(async () => {
    analyzer = await startFaceAnalyzerStub();
    // The analyzer's timeout is far above what a test holds it for: the test releases it.
    service = await startTestService('groupdeleterace', { FACE_ANALYZER_URL: analyzer.url, FACE_ANALYZER_TIMEOUT_MS: '20000' });
    await createGroups(service, ['retail']);
    token = (await createClientWithToken(service, { scopes: ['users'], enterpriseId })).accessToken;
    const raw = Buffer.alloc(400 * 300 * 3, 90);
    selfie = (
      await sharp(raw, { raw: { width: 400, height: 300, channels: 3 } })
        .jpeg()
        .toBuffer()
    ).toString('base64');
  });
  beforeEach(() => {
    analyzer.setMode('compliant');
    analyzer.requests.length = 0;
  });
  afterAll(async () => {
    analyzer.release();
    await service.close();
    await analyzer.close();
  });

  const admin = (method: 'GET' | 'DELETE', path: string) =>
    fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${service.config.adminToken}` } });
  const adminDelete = (group: string) => admin('DELETE', `/admin/groups/${group}`);
  const groupStatus = async (group: string) => (await admin('GET', `/admin/groups/${group}`)).status;
  const enroll = (body: unknown) => sendJson(`${service.url}/v1/users`, 'POST', token, body);
  const patch = (userId: string, body: unknown) => sendJson(`${service.url}/v1/users/${userId}`, 'PATCH', token, body);
  const getUser = (userId: string) => fetch(`${service.url}/v1/users/${userId}`, { headers: { authorization: `Bearer ${token}` } });
  const activity = async (userId: string) => {
    const res = await admin('GET', `/admin/activity?enterpriseId=${enterpriseId}&userId=${userId}`);
    return ((await res.json()) as { activity: Record<string, unknown>[] }).activity;
  };
  const missingGroup = (group: string, path: string) =>
    errorBody(409, 'Invalid data.', `The group name : ${group} does not exist in the system.`, path);

  /**
   * A PATCH service whose group check lets `afterCheck` run right after it (before the PATCH
   * writes), and whose re-read of the groups after the write lets `beforeReread` run first.
   */
  function updateRacing(steps: { afterCheck?: () => Promise<void>; beforeReread?: () => Promise<void> }) {
    const { users, groups, activity: activityRepository } = service.services.repositories;
    let calls = 0;
    return createUserUpdateService({
      users,
      activity: activityRepository,
      logger: service.ctx.logger,
      groups: {
        findMissingGroupNames: async (enterpriseId, names) => {
          calls += 1;
          if (calls === 2) await steps.beforeReread?.();
          const missing = await groups.findMissingGroupNames(enterpriseId, names);
          if (calls === 1) await steps.afterCheck?.();
          return missing;
        },
      },
    });
  }

  /**
   * An enrollment naming a new group, held by the face analyzer once it has passed its group check
   * (the analyzer has its request), so the test can act before it inserts.
   */
  async function heldEnrollment(groupField: { primaryGroup: string } | { secondaryGroups: string }) {
    await createGroups(service, [Object.values(groupField)[0] as string]);
    const userId = nextId();
    analyzer.setMode('held');
    const enrollment = enroll(userBody(userId, { ...groupField, selfieImage: selfie }));
    await eventually(async () => (analyzer.requests.length === 1 ? true : undefined));
    return { userId, enrollment };
  }

  describe('enrollment', () => {
    test('when a group is deleted while an enrollment naming it waits on the face analyzer, then the deletion is 204, the enrollment 409 and nothing of the user is left', async () => {
      const { userId, enrollment } = await heldEnrollment({ primaryGroup: 'doomed' });

      const deletion = await adminDelete('doomed');
      expect(deletion.status).toBe(204);
      analyzer.release();
      const res = await enrollment;

      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(missingGroup('doomed', '/v1/users'));
      expect(await groupStatus('doomed')).toBe(404);
      expect((await getUser(userId)).status).toBe(404);
      expect(await activity(userId)).toEqual([]);
      expect(await service.ctx.queues.enrollment.getJob(enrollmentJobId(enterpriseId, userId, 1))).toBeUndefined();
    });

    test('when a secondary group is deleted while the enrollment waits, then the enrollment is 409 naming it and the user id stays free', async () => {
      const { userId, enrollment } = await heldEnrollment({ secondaryGroups: 'doomed-side' });

      expect((await adminDelete('doomed-side')).status).toBe(204);
      analyzer.release();
      const res = await enrollment;

      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(missingGroup('doomed-side', '/v1/users'));
      analyzer.setMode('compliant');
      expect((await enroll(userBody(userId, { selfieImage: selfie }))).status).toBe(201);
    });

    test('when an enrollment is stored before the deletion counts, then the deletion is 409 and the group keeps the user', async () => {
      await createGroups(service, ['kept']);
      const userId = nextId();
      expect((await enroll(userBody(userId, { primaryGroup: 'kept' }))).status).toBe(201);
      const deletion = await adminDelete('kept');
      expect(deletion.status).toBe(409);
      expect(await deletion.json()).toEqual(errorBody(409, 'Conflict', 'Group kept is in use by 1 user', '/admin/groups/kept'));
      expect(await groupStatus('kept')).toBe(200);
    });
  });

  describe('enrollment re-reading its groups while the deletion decides', () => {
    test('when the enrollment is stored after the group was marked and before the count, then the enrollment is undone (409) and the deletion is 204', async () => {
      const { userId, enrollment } = await heldEnrollment({ primaryGroup: 'deciding' });
      const { groups, users } = service.services.repositories;
      let enrolled: Response | undefined;
      // The deletion marks the group, then lets the held enrollment insert and re-read before it counts.
      const markThenLetEnrollmentFinish: typeof groups.markForDeletion = async (...args) => {
        const marked = await groups.markForDeletion(...args);
        analyzer.release();
        enrolled = await enrollment;
        return marked;
      };

      await deleteGroup(
        {
          groups: { ...groups, markForDeletion: markThenLetEnrollmentFinish },
          users,
          activity: service.services.repositories.activity,
          logger: service.ctx.logger,
        },
        'deciding',
      );

      expect(enrolled?.status).toBe(409);
      expect(await enrolled?.json()).toEqual(missingGroup('deciding', '/v1/users'));
      expect(await groupStatus('deciding')).toBe(404);
      expect((await getUser(userId)).status).toBe(404);
    });
  });

  describe('deletion marker', () => {
    test('when another deletion is deciding on a group, then it takes no members, a second deletion is 409, and it is shown as before', async () => {
      await createGroups(service, ['closing']);
      const { groups } = service.services.repositories;
      const now = new Date();
      expect(await groups.markForDeletion('closing', undefined, { token: 'in-flight', until: new Date(now.getTime() + 60_000) }, now)).toBe(
        true,
      );
      const member = nextId();
      expect((await enroll(userBody(member))).status).toBe(201);

      const enrolled = await enroll(userBody(nextId(), { primaryGroup: 'closing' }));
      expect(await enrolled.json()).toEqual(missingGroup('closing', '/v1/users'));
      const patched = await patch(member, { secondaryGroups: 'closing' });
      expect(await patched.json()).toEqual(missingGroup('closing', `/v1/users/${member}`));
      const second = await adminDelete('closing');
      expect(await second.json()).toEqual(errorBody(409, 'Conflict', 'Group closing is being deleted', '/admin/groups/closing'));
      const shown = await admin('GET', '/admin/groups/closing');
      expect(Object.keys((await shown.json()) as object).sort()).toEqual(['createdAt', 'description', 'name']);

      await groups.unmarkForDeletion('closing', undefined, 'in-flight');
      expect((await patch(member, { secondaryGroups: 'closing' })).status).toBe(200);
    });

    test('when a deletion died after marking, then once its marker lapses the group takes members again and can be deleted', async () => {
      await createGroups(service, ['orphan-a', 'orphan-b']);
      const { groups } = service.services.repositories;
      const markedAt = new Date(Date.now() - 60_001);
      for (const name of ['orphan-a', 'orphan-b']) {
        expect(
          await groups.markForDeletion(name, undefined, { token: 'died', until: new Date(markedAt.getTime() + 60_000) }, markedAt),
        ).toBe(true);
      }
      expect((await enroll(userBody(nextId(), { primaryGroup: 'orphan-a' }))).status).toBe(201);
      expect((await adminDelete('orphan-a')).status).toBe(409);
      expect((await adminDelete('orphan-b')).status).toBe(204);
    });

    test('when a deletion takes longer than its marker allows, then it removes nothing (503) and the group takes members again', async () => {
      await createGroups(service, ['slow']);
      const start = Date.now();
      // The clock reads the marking time, then 31 s later at the removal: past the deletion's budget.
      const clock = [new Date(start), new Date(start + 31_000)];
      const outcome = deleteGroup(
        { ...service.services.repositories, logger: service.ctx.logger, now: () => clock.shift() ?? new Date() },
        'slow',
      );

      await expect(outcome).rejects.toThrow(UnavailableError);
      expect(await groupStatus('slow')).toBe(200);
      expect((await enroll(userBody(nextId(), { primaryGroup: 'slow' }))).status).toBe(201);
    });
  });

  describe('deletion', () => {
    test('when a group no live user names is deleted, then 204, it is gone and enrolling under it is the missing-group 409', async () => {
      await createGroups(service, ['unused']);
      expect((await adminDelete('unused')).status).toBe(204);
      expect(await groupStatus('unused')).toBe(404);
      const res = await enroll(userBody(nextId(), { primaryGroup: 'unused' }));
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual(missingGroup('unused', '/v1/users'));
    });

    test('when a group in use is deleted, then 409, it stays and takes new members by enrollment and by PATCH', async () => {
      await createGroups(service, ['busy']);
      expect((await enroll(userBody(nextId(), { primaryGroup: 'busy' }))).status).toBe(201);
      expect((await adminDelete('busy')).status).toBe(409);

      expect((await enroll(userBody(nextId(), { primaryGroup: 'busy' }))).status).toBe(201);
      const moved = nextId();
      expect((await enroll(userBody(moved))).status).toBe(201);
      const res = await patch(moved, { secondaryGroups: 'busy' });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ userId: moved, secondaryGroups: 'busy' });
      const again = await adminDelete('busy');
      expect(await again.json()).toEqual(errorBody(409, 'Conflict', 'Group busy is in use by 3 users', '/admin/groups/busy'));
    });
  });

  describe('PATCH', () => {
    test('when a group is deleted between the PATCH check and its write, then the deletion is 204, the PATCH 409 and the user is as before the PATCH', async () => {
      await createGroups(service, ['target']);
      const userId = nextId();
      expect((await enroll(userBody(userId, { secondaryGroups: '' }))).status).toBe(201);
      let deletionStatus = 0;
      const update = updateRacing({
        afterCheck: async () => {
          deletionStatus = (await adminDelete('target')).status;
        },
      });
      const mobile = uniqueMobile();

      const outcome = update.update(
        { clientId: 'racing-client' },
        { enterpriseId, userId },
        { changes: { primaryGroup: 'target', firstName: 'Changed', mobileNumber: mobile } },
      );

      await expect(outcome).rejects.toThrow(new ConflictError('The group name : target does not exist in the system.'));
      expect(deletionStatus).toBe(204);
      expect(await groupStatus('target')).toBe(404);
      const user = (await (await getUser(userId)).json()) as Record<string, unknown>;
      expect(user).toMatchObject({ primaryGroup: 'retail', firstName: 'Ada' });
      expect(user.mobileNumber).toBeUndefined();
      expect((await activity(userId)).map((e) => e.action)).toEqual(['user.enrolled']);
      // Nor does it owe the record an entry.
      expect(await service.services.repositories.users.findOwedActivity({ enterpriseId, userId })).toEqual([]);
      // The number the undone PATCH took is free again.
      expect((await enroll(userBody(nextId(), { mobileNumber: mobile }))).status).toBe(201);
    });

    test('when another PATCH lands between the PATCH write and its re-read, then the undo keeps what the other PATCH changed', async () => {
      await createGroups(service, ['target-2']);
      const userId = nextId();
      expect((await enroll(userBody(userId))).status).toBe(201);
      const update = updateRacing({
        afterCheck: async () => {
          expect((await adminDelete('target-2')).status).toBe(204);
        },
        beforeReread: async () => {
          expect((await patch(userId, { lastName: 'King' })).status).toBe(200);
        },
      });

      const outcome = update.update(
        { clientId: 'racing-client' },
        { enterpriseId, userId },
        { changes: { primaryGroup: 'target-2', firstName: 'Changed' } },
      );

      await expect(outcome).rejects.toThrow(new ConflictError('The group name : target-2 does not exist in the system.'));
      expect(await (await getUser(userId)).json()).toMatchObject({ primaryGroup: 'retail', firstName: 'Ada', lastName: 'King' });
      // Only the PATCH that stands is recorded, and the undone one owes nothing.
      expect((await activity(userId)).map((e) => e.action)).toEqual(['user.updated', 'user.enrolled']);
      expect(await service.services.repositories.users.findOwedActivity({ enterpriseId, userId })).toEqual([]);
    });

    test('when a secondary group is deleted between the PATCH check and its write, then the PATCH is 409 and the secondary groups are as before', async () => {
      await createGroups(service, ['side-a', 'side-b']);
      const userId = nextId();
      expect((await enroll(userBody(userId, { secondaryGroups: 'side-a' }))).status).toBe(201);
      const update = updateRacing({
        afterCheck: async () => {
          expect((await adminDelete('side-b')).status).toBe(204);
        },
      });

      const outcome = update.update(
        { clientId: 'racing-client' },
        { enterpriseId, userId },
        { changes: { secondaryGroups: ['side-a', 'side-b'] } },
      );

      await expect(outcome).rejects.toThrow(new ConflictError('The group name : side-b does not exist in the system.'));
      expect(await (await getUser(userId)).json()).toMatchObject({ primaryGroup: 'retail', secondaryGroups: 'side-a' });
    });

    test('when the PATCH moving a user out of a group is undone after that group was asked to go, then that deletion was 409 and the user names only groups that exist', async () => {
      await createGroups(service, ['left-1', 'left-2']);
      const userId = nextId();
      expect((await enroll(userBody(userId, { primaryGroup: 'left-1' }))).status).toBe(201);
      const { groups, users } = service.services.repositories;
      let reachReread = () => {};
      const atReread = new Promise<void>((resolve) => (reachReread = resolve));
      let releaseReread = () => {};
      const reread = new Promise<void>((resolve) => (releaseReread = resolve));
      // The PATCH writes primaryGroup left-2, then waits before it reads its groups again.
      const update = updateRacing({
        beforeReread: async () => {
          reachReread();
          await reread;
        },
      });
      const outcome = update
        .update({ clientId: 'racing-client' }, { enterpriseId, userId }, { changes: { primaryGroup: 'left-2' } })
        .catch((err: unknown) => err);
      await atReread;

      // A first deletion, of left-1, which the stored user no longer names but the PATCH's undo would write back.
      const first = await adminDelete('left-1');
      // A second deletion, of left-2, marks it, lets the PATCH re-read (it sees the mark and undoes), then counts.
      const letPatchFinish: typeof groups.markForDeletion = async (...args) => {
        const marked = await groups.markForDeletion(...args);
        releaseReread();
        await outcome;
        return marked;
      };
      await deleteGroup(
        {
          groups: { ...groups, markForDeletion: letPatchFinish },
          users,
          activity: service.services.repositories.activity,
          logger: service.ctx.logger,
        },
        'left-2',
      );

      expect(await outcome).toEqual(new ConflictError('The group name : left-2 does not exist in the system.'));
      expect(first.status).toBe(409);
      expect(await first.json()).toEqual(errorBody(409, 'Conflict', 'Group left-1 is in use by 1 user', '/admin/groups/left-1'));
      expect(await (await getUser(userId)).json()).toMatchObject({ primaryGroup: 'left-1' });
      expect(await groupStatus('left-1')).toBe(200);
      expect(await groupStatus('left-2')).toBe(404);
      // The PATCH's undo took its entry off: the group can go once the user leaves it.
      expect((await patch(userId, { primaryGroup: 'retail' })).status).toBe(200);
      expect((await adminDelete('left-1')).status).toBe(204);
    });

    test('when the PATCH is stored before the deletion counts, then the deletion is 409 and the PATCH stands', async () => {
      await createGroups(service, ['landing']);
      const userId = nextId();
      expect((await enroll(userBody(userId))).status).toBe(201);
      expect((await patch(userId, { primaryGroup: 'landing' })).status).toBe(200);
      expect((await adminDelete('landing')).status).toBe(409);
      expect(await (await getUser(userId)).json()).toMatchObject({ primaryGroup: 'landing' });
    });
  });
});
