import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createOidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import { DEFAULT_ENTERPRISE_ID, type UserRef } from '../../core/platform/tenancy/enterprise-id.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import { createNotificationsService } from '../../core/notifications/notifications.service.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import { createSignInFailuresRepository } from '../../core/sign-in/sign-in-failures.repository.js';
import { accountIdOf } from '../../core/sign-in/sign-in-users.js';
import { unlockSignIn } from '../../core/sign-in/sign-in-unlock.js';
import { createUserLifecycle } from '../../core/users/user-lifecycle.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { toUserResponse } from '../../api/routes/user-response.js';
import type { Connection } from 'mongoose';
import { checkAgainstSchema, comments, required, type CliOptions, type Command } from './cli-support.js';

const userRef = (arg: string | undefined, options: CliOptions): UserRef => ({
  enterpriseId: options.enterprise ?? DEFAULT_ENTERPRISE_ID,
  userId: required(arg, 'user id'),
});

/**
 * Blocking from the CLI does what the admin route does. The CLI has no queue connection: the
 * callbacks of the notifications it discards are sent by the notification worker's sweep, which
 * queues every ended notification whose callback is still waiting.
 */
function userLifecycle(mongo: Connection) {
  const users = createUsersRepository(mongo);
  const notifications = createNotificationsService({
    repository: createNotificationsRepository(mongo),
    users,
    enqueueExpiry: () => Promise.resolve(),
    enqueueCallback: () => Promise.reject(new Error('the admin CLI queues no callbacks')),
    logger: createLogger({ level: 'silent', name: 'admin-cli' }),
    callbackPolicy: { allowLoopback: false, allowedNetworks: [] },
  });
  return createUserLifecycle({
    users,
    activity: createActivityRepository(mongo),
    discardPendingNotifications: (ref) => notifications.discardPendingNotifications(ref),
    endSignIns: (ref) => createOidcRecordsRepository(mongo).endOidcRecordsOfAccount(accountIdOf(ref), new Date()),
  });
}

function blockCommand(blocked: boolean): Command {
  return async ({ mongo, arg, options }) => {
    const body = { blocked, ...(options.reason === undefined ? {} : { reason: options.reason }) };
    checkAgainstSchema('admin-users.blocked.json', body);
    const ref = userRef(arg, options);
    return { enterpriseId: ref.enterpriseId, ...toUserResponse(await userLifecycle(mongo).setBlocked(ref, blocked, body.reason)) };
  };
}

export const userCommands: Record<string, Command> = {
  'users block': blockCommand(true),
  'users unblock': blockCommand(false),
  'users unlock-sign-in': async ({ mongo, arg, options }) => {
    const ref = userRef(arg, options);
    const deps = {
      users: createUsersRepository(mongo),
      failures: createSignInFailuresRepository(mongo),
      activity: createActivityRepository(mongo),
    };
    const { wasLocked } = await unlockSignIn(deps, ref, comments(options));
    return { ...ref, wasLocked };
  },
};
