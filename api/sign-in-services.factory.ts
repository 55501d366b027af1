import { createActivityRepository } from '../core/activity/activity.repository.js';
import { signIns } from '../core/platform/metrics/business-metrics.js';
import { createPasskeySignIn } from '../core/passkeys/passkey-sign-in.service.js';
import { createPasskeysRepository } from '../core/passkeys/passkeys.repository.js';
import { createLoginLimits } from '../core/sign-in/login-rate-limits.js';
import { createLoginStatesRepository } from '../core/sign-in/login-states.repository.js';
import { createLoginService } from '../core/sign-in/login.service.js';
import { createSignInFailuresRepository } from '../core/sign-in/sign-in-failures.repository.js';
import { createUsersRepository } from '../core/users/users.repository.js';
import type { InteractionServices } from './auth-server/interaction.routes.js';
import type { OtpRouteServices } from './routes/otp.routes.js';
import type { ServiceContext } from './service-context.js';

/** Wires the sign-in pages to the OTP pipeline, the users and this process's stores. */
export function createSignInServices(
  ctx: ServiceContext,
  otp: Pick<OtpRouteServices, 'generation' | 'validation'>,
): Omit<InteractionServices, 'logger'> {
  const states = createLoginStatesRepository(ctx.mongo);
  const limits = createLoginLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.login);
  const users = createUsersRepository(ctx.mongo);
  const login = createLoginService({
    users,
    states,
    limits,
    failures: createSignInFailuresRepository(ctx.mongo),
    activity: createActivityRepository(ctx.mongo),
    maxFailures: ctx.config.login.maxFailures,
    userStepFloorMs: ctx.config.login.userStepFloorMs,
    otp: {
      generate: (command) => otp.generation.generate(command),
      validate: (otpUuid, clientId, code) => otp.validation.validate(otpUuid, clientId, code),
    },
    logger: ctx.logger,
  });
  // Every login-code check is counted by outcome (signed_in, wrong_code, locked, ...) for dashboards.
  const countedLogin: typeof login = {
    ...login,
    verify: async (...args) => {
      const outcome = await login.verify(...args);
      signIns.inc({ outcome: outcome.kind.replace(/-/g, '_') });
      return outcome;
    },
  };
  const passkeySignIn = createPasskeySignIn({
    passkeys: createPasskeysRepository(ctx.mongo),
    users,
    limits,
    config: ctx.config.passkeys,
    logger: ctx.logger,
  });
  const passkeys: InteractionServices['passkeys'] = {
    rpId: ctx.config.passkeys.rpId,
    verify: async (...args) => {
      const outcome = await passkeySignIn.verify(...args);
      signIns.inc({ outcome: `passkey_${outcome.kind.replace(/-/g, '_')}` });
      return outcome;
    },
  };
  return { login: countedLogin, states, limits, passkeys };
}
