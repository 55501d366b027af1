import { DEFAULT_ENTERPRISE_ID, type UserRef } from '../../core/platform/tenancy/enterprise-id.js';
import { unlockSignIn } from '../../core/sign-in/sign-in-unlock.js';
import { toUserResponse } from '../../api/routes/user-response.js';
import { checkAgainstSchema, comments, required, type CliOptions, type Command } from './cli-support.js';

const userRef = (arg: string | undefined, options: CliOptions): UserRef => ({
  enterpriseId: options.enterprise ?? DEFAULT_ENTERPRISE_ID,
  userId: required(arg, 'user id'),
});

/** Blocking from the CLI does what the admin route does (the lifecycle built by cli-root.ts). */
function blockCommand(blocked: boolean): Command {
  return async ({ services, arg, options }) => {
    const body = { blocked, ...(options.reason === undefined ? {} : { reason: options.reason }) };
    checkAgainstSchema('admin-users.blocked.json', body);
    const ref = userRef(arg, options);
    return { enterpriseId: ref.enterpriseId, ...toUserResponse(await services.userLifecycle.setBlocked(ref, blocked, body.reason)) };
  };
}

export const userCommands: Record<string, Command> = {
  'users block': blockCommand(true),
  'users unblock': blockCommand(false),
  'users unlock-sign-in': async ({ services, arg, options }) => {
    const ref = userRef(arg, options);
    const { users, signInFailures: failures, activity, logger } = services;
    const { wasLocked } = await unlockSignIn({ users, failures, activity, logger }, ref, comments(options));
    return { ...ref, wasLocked };
  },
};
