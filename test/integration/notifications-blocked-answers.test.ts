import type { UserRef } from '../../core/platform/tenancy/enterprise-id.js';
import { createUserLifecycle, type UserLifecycle } from '../../core/users/user-lifecycle.service.js';
import type { UserFinder } from '../../core/users/user-reachability.js';
import { createClientWithToken } from '../support/auth-helpers.js';
import {
  blockUser,
  mintUserToken,
  notificationBody,
  notificationsServiceOver,
  registerAppClient,
} from '../support/notification-helpers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';
import { errorBody, sendJson } from '../support/users-helpers.js';

/** A promise and the function that settles it: holds one step of a flow until another has run. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * An answer that crosses a block or a delete: the user's token was good when the request
 * arrived, but the user is blocked (or deleted) before the answer is written. Blocking ends
 * everything the user holds, pending notifications included, so such an answer is refused and
 * the notification ends DISCARD, never UPDATED.
 */
describe('Notifications: an answer that crosses a block or a delete', () => {
  let service: TestService;
  let enterprise: string;
  let appClientId: string;

  beforeAll(async () => {
    service = await startTestService('notifblockedanswers');
    enterprise = (await createClientWithToken(service, { scopes: ['users', 'notifications'] })).accessToken;
    appClientId = await registerAppClient(service);
  });
  afterAll(async () => {
    await service.close();
  });

  const refOf = (userId: string): UserRef => ({ enterpriseId: 'default', userId });
  async function pending(userId: string): Promise<string> {
    const res = await sendJson(`${service.url}/v1/notifications`, 'POST', enterprise, notificationBody(userId));
    expect(res.status).toBe(201);
    return ((await res.json()) as { notification_uuid: string }).notification_uuid;
  }
  const statusOf = async (uuid: string) =>
    (
      (await (await fetch(`${service.url}/v1/notifications/${uuid}`, { headers: { authorization: `Bearer ${enterprise}` } })).json()) as {
        status: string;
      }
    ).status;
  const answer = (uuid: string, token: string) =>
    sendJson(`${service.url}/v1/me/notifications/${uuid}/action`, 'POST', token, { response: 'accept' });

  /** Runs `step` when the API first reads this notification: after the answer's token check, before anything else of the answer. */
  function onFirstRead(uuid: string, step: () => Promise<unknown>): void {
    const notifications = service.services.repositories.notifications;
    const find = notifications.find;
    notifications.find = async (id) => {
      if (id === uuid) {
        notifications.find = find;
        await step();
      }
      return find(id);
    };
  }

  describe('through the user API', () => {
    test('when the user is blocked after their answer passed the token check, then 403 user_blocked (code 141) as for the token, nothing changes, and the block ends it DISCARD', async () => {
      await insertUser(service.ctx.mongo, { userId: 'late-block' });
      const token = await mintUserToken(service, { userId: 'late-block', clientId: appClientId });
      const uuid = await pending('late-block');
      // The first step of the admin's block only: the block is stored, its discard has not run yet.
      onFirstRead(uuid, () => service.services.repositories.users.setBlocked(refOf('late-block'), true, undefined, new Date()));
      const res = await answer(uuid, token);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'user_blocked', error_description: 'User is blocked', code: 141 });
      expect(await statusOf(uuid)).toBe('ACTIVE');
      await blockUser(service, 'late-block');
      expect(await statusOf(uuid)).toBe('DISCARD');
    });

    test('when the user is deleted after their answer passed the token check, then 404 User not found (code 4), nothing changes, and the delete ends it DISCARD', async () => {
      await insertUser(service.ctx.mongo, { userId: 'late-delete' });
      const token = await mintUserToken(service, { userId: 'late-delete', clientId: appClientId });
      const uuid = await pending('late-delete');
      onFirstRead(uuid, () => service.services.repositories.users.markDeleted(refOf('late-delete'), new Date()));
      const res = await answer(uuid, token);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        ...errorBody(404, 'Not Found', 'User not found', `/v1/me/notifications/${uuid}/action`),
        code: 4,
      });
      expect(await statusOf(uuid)).toBe('ACTIVE');
      const deleted = await fetch(`${service.url}/v1/users/late-delete`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${enterprise}` },
      });
      expect(deleted.status).toBe(204);
      expect(await statusOf(uuid)).toBe('DISCARD');
    });
  });

  describe('the answer read the user before the status was stored, and writes after it (service level, real store)', () => {
    /**
     * Interleaves one answer with the real user lifecycle: the answer reads its user (not yet
     * blocked or deleted), then the lifecycle runs until the user's new status is stored and
     * holds the discard that follows it; the answer goes on to its write, and once it has
     * settled the discard runs. Returns what the answer did: 'accepted' or its error.
     */
    async function answerAcross(userId: string, uuid: string, end: (lifecycle: UserLifecycle, ref: UserRef) => Promise<unknown>) {
      const { repositories } = service.services;
      let statusStored = false;
      const discardReached = gate();
      const discardHeld = gate();
      const lifecycle = createUserLifecycle({
        users: {
          findUser: (ref) => repositories.users.findUser(ref),
          endPendingActivation: (ref, at) => repositories.users.endPendingActivation(ref, at),
          findOwedActivity: (ref) => repositories.users.findOwedActivity(ref),
          settledOwedActivity: (ref, ids) => repositories.users.settledOwedActivity(ref, ids),
          setBlocked: async (...args) => {
            const known = await repositories.users.setBlocked(...args);
            statusStored = true;
            return known;
          },
          markDeleted: async (...args) => {
            const outcome = await repositories.users.markDeleted(...args);
            statusStored = true;
            return outcome;
          },
        },
        activity: repositories.activity,
        discardPendingNotifications: async (ref) => {
          if (statusStored) {
            discardReached.open();
            await discardHeld.opened;
          }
          return service.services.notifications.discardPendingNotifications(ref);
        },
        endSignIns: async () => {},
        cancelPendingOtps: async () => {},
        logger: service.ctx.logger,
      });
      let ending: Promise<unknown> | undefined;
      const users: UserFinder = {
        async findUser(ref) {
          const found = await repositories.users.findUser(ref);
          if (!ending) {
            ending = end(lifecycle, ref);
            await Promise.race([discardReached.opened, ending]);
          }
          return found;
        },
      };
      const notifications = notificationsServiceOver(service, { repository: repositories.notifications, users });
      const outcome = await notifications.answer('default', userId, uuid, { response: 'accept' }).then(
        () => 'accepted',
        (err: unknown) => err,
      );
      discardHeld.open();
      await ending;
      return outcome;
    }

    test('when a block is stored between the answer reading its user and writing, then the answer is refused as blocked and the notification ends DISCARD', async () => {
      await insertUser(service.ctx.mongo, { userId: 'crossing-block' });
      const uuid = await pending('crossing-block');
      const outcome = await answerAcross('crossing-block', uuid, (lifecycle, ref) => lifecycle.setBlocked(ref, true, 'compromised device'));
      expect(outcome).toMatchObject({ code: 'USER_BLOCKED', message: 'User is blocked' });
      expect(await statusOf(uuid)).toBe('DISCARD');
    });

    test('when a delete is stored between the answer reading its user and writing, then the answer is refused as not found and the notification ends DISCARD', async () => {
      await insertUser(service.ctx.mongo, { userId: 'crossing-delete' });
      const uuid = await pending('crossing-delete');
      const outcome = await answerAcross('crossing-delete', uuid, (lifecycle, ref) => lifecycle.remove({ clientId: 'test' }, ref));
      expect(outcome).toMatchObject({ message: 'User not found' });
      expect(await statusOf(uuid)).toBe('DISCARD');
    });
  });
});
