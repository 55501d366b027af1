import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger/logger.js';
import { legacySpecToSegment } from '../otp/otp-legacy-spec.js';
import type { GenerateOtpCommand } from '../otp/otp-generation.service.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { LoginLimits } from './login-rate-limits.js';
import type { LoginState, LoginStatesRepository } from './login-states.repository.js';
import { canReceiveLoginCode, canSignIn, findUserForSignIn, signInUserKey, type SignInClient } from './sign-in-users.js';

/** The login code: 6 digits, 5 minutes, 5 attempts, through the OTP pipeline. */
export const LOGIN_CODE = Object.freeze({
  spec: 'N-6',
  expiresInSeconds: 300,
  attempts: 5,
  smsTemplate: 'login_sms',
  emailTemplate: 'login_email',
});

/** Macro of the login templates naming the app being signed in to. */
export const APP_NAME_MACRO = '__SVC_APP__';

export interface LoginServiceDeps {
  users: Pick<UsersRepository, 'findUser'>;
  states: LoginStatesRepository;
  limits: LoginLimits;
  otp: {
    generate(command: GenerateOtpCommand): Promise<{ otpUuid: string }>;
    validate(otpUuid: string, clientId: string, code: string): Promise<unknown>;
  };
  logger: Logger;
  now?: () => Date;
}

export type VerifyOutcome =
  | { kind: 'signed-in'; userId: string }
  | { kind: 'wrong-code'; attemptsLeft: number }
  | { kind: 'locked' }
  | { kind: 'expired' }
  | { kind: 'not-active' }
  | { kind: 'refused' };

/**
 * The OTPs of sign-in are kept apart from the client's own (`login:` owner), so the app
 * cannot read or validate its users' login codes through /v1/svc-otp.
 */
export const loginOtpOwner = (clientId: string) => `login:${clientId}`;

/**
 * The login interaction's steps. A user id that may not receive a code (unknown, DELETED,
 * blocked) goes through the same steps with a decoy counter and no message, so the pages
 * cannot tell them from real users.
 */
export function createLoginService(deps: LoginServiceDeps) {
  const now = deps.now ?? (() => new Date());

  async function sendCode(state: LoginState, client: SignInClient, userId: string): Promise<void> {
    const user = await findUserForSignIn(deps.users, client, userId);
    if (!canReceiveLoginCode(user) || (!user.mobileNumber && !user.emailId)) {
      await deps.states.setCode(state.uid, userId, undefined, now());
      return;
    }
    // SMS to the registered mobile number, else e-mail.
    const channels = user.mobileNumber ? { SMS: LOGIN_CODE.smsTemplate } : { EMAIL: LOGIN_CODE.emailTemplate };
    const { otpUuid } = await deps.otp.generate({
      clientId: loginOtpOwner(client.clientId),
      enterpriseId: client.enterpriseId,
      rawBody: {},
      request: {
        userId: user.userId,
        segments: [legacySpecToSegment(LOGIN_CODE.spec)],
        channels,
        dynamicMacros: { [APP_NAME_MACRO]: client.name },
        attempts: LOGIN_CODE.attempts,
        expiresIn: LOGIN_CODE.expiresInSeconds,
        hashSpec: 'SHA_256',
        generateJwt: false,
      },
    });
    await deps.states.setCode(state.uid, userId, otpUuid, now());
  }

  return {
    /** Step one: the user id form. Counts against the per-user limits whatever the user is. */
    async start(state: LoginState, client: SignInClient, userId: string): Promise<void> {
      await deps.limits.consume('perUser', signInUserKey(client, userId));
      await deps.limits.consume('codesPerUser', signInUserKey(client, userId));
      await sendCode(state, client, userId);
    },

    /** "Send a new code": a fresh code replaces the previous one. */
    async resend(state: LoginState, client: SignInClient): Promise<void> {
      if (state.userId === undefined) return;
      await deps.limits.consume('perUser', signInUserKey(client, state.userId));
      await deps.limits.consume('codesPerUser', signInUserKey(client, state.userId));
      await sendCode(state, client, state.userId);
    },

    /** Step two: the code form. */
    async verify(state: LoginState, client: SignInClient, code: string): Promise<VerifyOutcome> {
      if (state.userId === undefined) return { kind: 'expired' };
      await deps.limits.consume('perUser', signInUserKey(client, state.userId));
      if (state.otpUuid === undefined) {
        const used = await deps.states.takeDecoyAttempt(state.uid, LOGIN_CODE.attempts);
        if (used === undefined) return { kind: 'locked' };
        const attemptsLeft = LOGIN_CODE.attempts - used;
        return attemptsLeft === 0 ? { kind: 'locked' } : { kind: 'wrong-code', attemptsLeft };
      }
      try {
        await deps.otp.validate(state.otpUuid, loginOtpOwner(client.clientId), code);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        switch (err.code) {
          case 'OTP_FAILED': {
            const attemptsLeft = Number(err.extra.attemptsLeft ?? 0);
            return attemptsLeft === 0 ? { kind: 'locked' } : { kind: 'wrong-code', attemptsLeft };
          }
          case 'OTP_LOCKED':
            return { kind: 'locked' };
          case 'OTP_EXPIRED':
          case 'OTP_USED':
          case 'NOT_FOUND':
            return { kind: 'expired' };
          default:
            throw err;
        }
      }
      // The code proves the address; the account must still be allowed to sign in now.
      const user = await findUserForSignIn(deps.users, client, state.userId);
      if (user && canSignIn(user)) return { kind: 'signed-in', userId: user.userId };
      if (user && !user.blocked && (user.status === 'CREATED' || user.status === 'ONBOARDING')) return { kind: 'not-active' };
      deps.logger.info({ clientId: client.clientId }, 'sign-in refused after a right code: user deleted or blocked meanwhile');
      return { kind: 'refused' };
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
