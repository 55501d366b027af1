import type { ActivityRepository } from '../activity/activity.repository.js';
import type { Logger } from '../platform/logger/logger.js';
import { legacySpecToSegment } from '../otp/otp-legacy-spec.js';
import type { GenerateOtpCommand } from '../otp/otp-generation.service.js';
import type { OtpCheck } from '../otp/otp-validation.service.js';
import type { User } from '../users/user.types.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { LoginLimits } from './login-rate-limits.js';
import type { LoginState, LoginStatesRepository } from './login-states.repository.js';
import type { SignInFailuresRepository } from './sign-in-failures.repository.js';
import { canSignIn, isReachable } from '../users/user-reachability.js';
import { findUserForSignIn, signInUserKey, type SignInClient } from './sign-in-users.js';
import { owedActivityEntry } from '../users/owed-activity.js';
import { oweAhead, settleMadeAhead, withdrawAhead } from '../users/owed-activity-ahead.js';
import { signInLocked } from './sign-in-lock-activity.js';
import { BASE_LOCALE } from '../platform/locales/shipped-locales.js';
import { localizedTemplateName } from '../templates/template-locale.js';
import { CODE_LIFETIME_MACRO, loginCodeLifetime } from './login-code-lifetime.js';
import { loginCodeChannel } from './login-code-channel.js';
import type { Channel } from '../deliveries/delivery.types.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';

/** The login code: 6 digits, 5 attempts, through the OTP pipeline (its lifetime is LOGIN_CODE_TTL_SECONDS). */
export const LOGIN_CODE = Object.freeze({
  spec: 'N-6',
  attempts: 5,
  /** The login code's template on each channel (each shipped language has its variant). */
  templates: Object.freeze({ SMS: 'login_sms', EMAIL: 'login_email' } satisfies Record<Channel, string>),
});

/** Macro of the login templates naming the app being signed in to. */
export const APP_NAME_MACRO = '__SVC_APP__';

export interface LoginServiceDeps {
  users: Pick<UsersRepository, 'findUser' | 'oweActivity' | 'findOwedActivity' | 'settledOwedActivity'>;
  states: LoginStatesRepository;
  limits: LoginLimits;
  failures: SignInFailuresRepository;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /** Consecutive failed code checks of a user id after which sign-in is locked (NIST SP 800-63B: at most 100). */
  maxFailures: number;
  /** The user-id and new-code steps answer no sooner than this after they arrived (see start). */
  userStepFloorMs: number;
  /** How long a sent login code is valid. */
  codeTtlSeconds: number;
  otp: {
    generate(command: GenerateOtpCommand): Promise<{ otpUuid: string }>;
    validate(otpUuid: string, clientId: string, code: string): Promise<OtpCheck>;
  };
  logger: Logger;
  /** The deployment's SMS_ALLOWED_COUNTRIES (undefined: every country): a number outside them gets no login code by SMS. */
  smsCountries?: SmsCountries;
  now?: () => Date;
}

export type VerifyOutcome =
  | { kind: 'signed-in'; userId: string }
  | { kind: 'wrong-code'; attemptsLeft: number }
  | { kind: 'locked' }
  | { kind: 'expired' }
  | { kind: 'not-active' }
  | { kind: 'refused' }
  | { kind: 'sign-in-locked' };

/**
 * The answer of the user-id and new-code steps: the code page (then `afterAnswer` sends the code,
 * once the page is on its way), or the lock.
 */
export type CodeStep = { kind: 'code-page'; afterAnswer: () => Promise<void> } | { kind: 'sign-in-locked' };

/** What a check of a code found, and whether a check was made at all (a used-up code is not checked). */
type Checked = { outcome: VerifyOutcome; checked: boolean };

/**
 * The OTPs of sign-in are kept apart from the client's own (`login:` owner), so the app
 * cannot read or validate its users' login codes through /v1/svc-otp.
 */
export const loginOtpOwner = (clientId: string) => `login:${clientId}`;

/**
 * The login interaction's steps. A user id that may not receive a code (unknown, DELETED,
 * blocked) goes through the same steps with a decoy counter and no message, so the pages
 * cannot tell them from real users. Failed checks count per user id across codes and
 * addresses; at `maxFailures` sign-in is locked, for unknown user ids alike.
 */
export function createLoginService(deps: LoginServiceDeps) {
  const now = deps.now ?? (() => new Date());

  /**
   * Generates and sends the login code of a user who may receive one, after the page has
   * answered, and attaches it to the page's state. Nothing for any other id. Failures are logged
   * (the person can ask for a new code); they never show on the page, where they would tell a
   * known user id from an unknown one.
   */
  async function deliver(stateUid: string, client: SignInClient, user: User, requestedAt: Date): Promise<void> {
    try {
      const channel = loginCodeChannel(user, deps.smsCountries);
      if (channel === undefined) {
        deps.logger.warn(
          { clientId: client.clientId },
          "login code not sent: SMS may not go to the user's mobileNumber (SMS_ALLOWED_COUNTRIES) and there is no emailId",
        );
        return;
      }
      // In the language of the sign-in's pages: every shipped language has its login templates (template-locale.ts).
      const locale = client.locale ?? BASE_LOCALE;
      const channels = { [channel]: localizedTemplateName(LOGIN_CODE.templates[channel], locale) };
      const { otpUuid } = await deps.otp.generate({
        clientId: loginOtpOwner(client.clientId),
        enterpriseId: client.enterpriseId,
        rawBody: {},
        request: {
          userId: user.userId,
          segments: [legacySpecToSegment(LOGIN_CODE.spec)],
          channels,
          dynamicMacros: { [APP_NAME_MACRO]: client.name, [CODE_LIFETIME_MACRO]: loginCodeLifetime(locale, deps.codeTtlSeconds) },
          attempts: LOGIN_CODE.attempts,
          expiresIn: deps.codeTtlSeconds,
          hashSpec: 'SHA_256',
          generateJwt: false,
        },
      });
      await deps.states.attachCode(stateUid, user.userId, requestedAt, otpUuid);
    } catch (err) {
      deps.logger.error({ err, clientId: client.clientId }, 'login code could not be sent');
    }
  }

  /**
   * A code for this user id, whoever it is: the same budgets, the same two reads (user and
   * lock, at once) and the same state write for every kind of id; the code itself is generated
   * and sent only after the page has answered (`afterAnswer`), so a known id costs the answer
   * no more work than an unknown one. What remains (the few bytes more a found user costs the
   * store) is hidden by answering at a fixed floor after arrival (measured in bench/login-timing).
   */
  async function requestCode(state: LoginState, client: SignInClient, userId: string, address: string): Promise<CodeStep> {
    const started = performance.now();
    try {
      await deps.limits.consumeStep(signInUserKey(client, userId), address, true);
      const ref = { enterpriseId: client.enterpriseId, userId };
      const [user, locked] = await Promise.all([
        findUserForSignIn(deps.users, client, userId),
        deps.failures.isLocked(ref, deps.maxFailures),
      ]);
      if (locked) return { kind: 'sign-in-locked' };
      const requestedAt = now();
      await deps.states.setUser(state.uid, userId, requestedAt);
      const reachable = isReachable(user) && Boolean(user.mobileNumber || user.emailId);
      return { kind: 'code-page', afterAnswer: reachable ? () => deliver(state.uid, client, user, requestedAt) : async () => {} };
    } finally {
      const left = deps.userStepFloorMs - (performance.now() - started);
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    }
  }

  /**
   * Whether the code of this page is past its lifetime, by the time the user id was taken: the
   * same instant for every kind of id. The real code's own expiry comes a little later (it is
   * generated after the answer), and a decoy has none, so this check is what makes an unknown id's
   * page say "expired" exactly when a known one's does.
   */
  function codeTimedOut(state: LoginState): boolean {
    return state.codeSentAt !== undefined && now().getTime() >= state.codeSentAt.getTime() + deps.codeTtlSeconds * 1000;
  }

  async function check(state: LoginState & { userId: string }, client: SignInClient, code: string): Promise<Checked> {
    if (codeTimedOut(state)) return { outcome: { kind: 'expired' }, checked: false };
    if (state.otpUuid === undefined) {
      const used = await deps.states.takeDecoyAttempt(state.uid, LOGIN_CODE.attempts);
      if (used === undefined) return { outcome: { kind: 'locked' }, checked: false };
      const attemptsLeft = LOGIN_CODE.attempts - used;
      return { outcome: attemptsLeft === 0 ? { kind: 'locked' } : { kind: 'wrong-code', attemptsLeft }, checked: true };
    }
    const otp = await deps.otp.validate(state.otpUuid, loginOtpOwner(client.clientId), code);
    if (otp.kind === 'wrong') {
      return {
        outcome: otp.attemptsLeft === 0 ? { kind: 'locked' } : { kind: 'wrong-code', attemptsLeft: otp.attemptsLeft },
        checked: true,
      };
    }
    // An ended code takes no attempt: locked when its attempts are used up, else it expired (or was used, cancelled, or is unknown).
    if (otp.kind === 'ended' && otp.status === 'LOCKED') return { outcome: { kind: 'locked' }, checked: false };
    if (otp.kind !== 'valid') return { outcome: { kind: 'expired' }, checked: false };
    // The code proves the address; the account must still be allowed to sign in now.
    const user = await findUserForSignIn(deps.users, client, state.userId);
    if (user && canSignIn(user)) return { outcome: { kind: 'signed-in', userId: user.userId }, checked: true };
    if (user && !user.blocked && (user.status === 'CREATED' || user.status === 'ONBOARDING'))
      return { outcome: { kind: 'not-active' }, checked: true };
    deps.logger.info({ clientId: client.clientId }, 'sign-in refused after a right code: user deleted or blocked meanwhile');
    return { outcome: { kind: 'refused' }, checked: true };
  }

  /**
   * The cap was reached by this failure: locked, and recorded for the admins when the user exists,
   * exactly once: the entry is stored on the user ahead of the lock (sign-in-lock-activity.ts).
   */
  async function lock(client: SignInClient, userId: string): Promise<void> {
    const ref = { enterpriseId: client.enterpriseId, userId };
    const at = now();
    const known = (await findUserForSignIn(deps.users, client, userId)) !== undefined;
    const owed = owedActivityEntry('user.sign-in-locked', { type: 'user' }, at, `${deps.maxFailures} consecutive wrong login codes`, {
      ahead: signInLocked(at),
    });
    const owes = known && (await oweAhead(deps, ref, owed));
    if (!(await deps.failures.lock(ref, at))) {
      if (owes) await withdrawAhead(deps, ref, owed); // locked already, by a failure counted at the same time
      return;
    }
    if (!owes) return;
    deps.logger.warn({ clientId: client.clientId }, 'sign-in locked after too many consecutive wrong login codes');
    await settleMadeAhead(deps, ref, owed);
  }

  return {
    /** Step one: the user id form. Counts against the budgets of this user id whatever the user is. */
    start(state: LoginState, client: SignInClient, userId: string, address: string): Promise<CodeStep> {
      return requestCode(state, client, userId, address);
    },

    /** "Send a new code": a fresh code replaces the previous one. */
    async resend(state: LoginState, client: SignInClient, address: string): Promise<CodeStep> {
      if (state.userId === undefined) return { kind: 'code-page', afterAnswer: async () => {} };
      return requestCode(state, client, state.userId, address);
    },

    /** Step two: the code form. */
    async verify(state: LoginState, client: SignInClient, code: string, address: string): Promise<VerifyOutcome> {
      if (state.userId === undefined) return { kind: 'expired' };
      const key = signInUserKey(client, state.userId);
      await deps.limits.consumeStep(key, address, false);
      const ref = { enterpriseId: client.enterpriseId, userId: state.userId };
      // Counted before the check, so parallel guesses never pass the cap.
      const failures = await deps.failures.take(ref, deps.maxFailures, now());
      if (failures === undefined) return { kind: 'sign-in-locked' };
      const { outcome, checked } = await check({ ...state, userId: state.userId }, client, code);
      if (!checked) {
        await deps.failures.giveBack(ref);
        return outcome;
      }
      if (outcome.kind === 'wrong-code' || outcome.kind === 'locked') {
        if (failures < deps.maxFailures) return outcome;
        await lock(client, state.userId);
        return { kind: 'sign-in-locked' };
      }
      // A right code: the count starts over, and this address is the user's from now on.
      await deps.failures.clear(ref);
      if (outcome.kind === 'signed-in') await deps.limits.rememberAddress(key, address);
      return outcome;
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
