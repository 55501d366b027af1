import { createPublicKey } from 'node:crypto';
import type { ActivityRepository } from '../activity/activity.repository.js';
import { userSubject, type UserRef } from '../platform/tenancy/enterprise-id.js';
import { ConflictError, GoneError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { Logger } from '../platform/logger/logger.js';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import { digestActivationCode, generateActivationCode, verifyActivationCode } from './activation-code.js';
import type { ActivationThrottle } from './activation-throttle.js';
import { userExists } from './enrollment.service.js';
import { owedActivityEntry, settleOwedActivity } from './owed-activity.js';
import { PENDING_STATUSES, type UserDevice } from './user.types.js';
import type { UsersRepository } from './users.repository.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';
import { refuseActivationOnlyBySmsOutsideCountries } from './activation-sms-country.js';

export interface ActivateCommand extends UserRef {
  activationCode: string;
  device?: { deviceId: string; publicKeyJwk: { kty: string; crv: string; x: string; y: string; d?: unknown } };
  /** The caller's address, as the allow-list sees it: the throttle's per-address scope. */
  ip: string;
}

export interface ActivationDeps {
  users: Pick<
    UsersRepository,
    'findUser' | 'findActivationState' | 'completeActivation' | 'replaceActivation' | 'findOwedActivity' | 'settledOwedActivity'
  >;
  throttle: Pick<ActivationThrottle, 'admit' | 'succeeded' | 'reset' | 'maxFailures'>;
  /** Queues the activation messages of a code issue; tolerates Redis being down. */
  queueActivation: (ref: UserRef, issue: number) => Promise<void>;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  /**
   * Completing activation again ends a sign-in locked by wrong login codes, recorded as the
   * user's `user.sign-in-unlocked` ('activation completed') exactly once (the sign-in feature's
   * endSignInLock; true when there was a lock to end).
   */
  endSignInLock: (ref: UserRef) => Promise<boolean>;
  keys: OtpKeys;
  codeTtlSeconds: number;
  /** Every refused activation answers no sooner than this after it arrived (see activate). */
  failureFloorMs: number;
  /** Where the steps after a completed activation that failed are told (they do not fail it). */
  logger: Logger;
  /** The deployment's SMS_ALLOWED_COUNTRIES (undefined: every country). */
  smsCountries?: SmsCountries;
  now?: () => Date;
}

export interface ActivationResult {
  userId: string;
  status: 'ACTIVE';
  verificationKey: string;
  deviceId?: string;
}

export const wrongCode = (attemptsLeft: number) => new ValidationError('Invalid activation code', { extra: { attemptsLeft } });
export const activationExpired = () => new GoneError('ACTIVATION_EXPIRED', 'Activation code expired; ask for a new activation code');

/** The device key must be a real P-256 point (createPublicKey checks it is on the curve). */
function toDevice(device: NonNullable<ActivateCommand['device']>, now: Date): UserDevice {
  const { kty, crv, x, y } = device.publicKeyJwk;
  if (device.publicKeyJwk.d !== undefined) throw new ValidationError('[Invalid field device.publicKeyJwk]', { error: 'Invalid data.' });
  try {
    const key = createPublicKey({ key: { kty, crv, x, y }, format: 'jwk' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('not P-256');
  } catch {
    throw new ValidationError('[Invalid field device.publicKeyJwk]', { error: 'Invalid data.' });
  }
  return { deviceId: device.deviceId, publicKeyJwk: { kty: 'EC', crv: 'P-256', x, y }, registeredAt: now };
}

export function createActivationService(deps: ActivationDeps) {
  const now = deps.now ?? (() => new Date());
  // Checked instead of a real digest when there is nothing to activate (unknown, ACTIVE, DELETED
  // or blocked user): the same HMAC and comparison, and it never matches (a userId has no NUL).
  const dummySubject = '\u0000nobody';
  const dummyDigest = digestActivationCode(dummySubject, '\u0000', deps.keys.hmacKey);

  /**
   * The user is ACTIVE once completeActivation returned: that is the activation, and the person
   * cannot repeat it (the code is gone). So what follows must not turn it into an error, which
   * would leave the app without the verification key: each step that fails is logged (with the
   * enterprise only) and the answer is still the activation's. Whatever a failure leaves undone
   * is done later or is harmless: the `user.activated` entry is owed on the user and written by
   * the enrollment worker's sweep; the throttle's counters of the user expire on their own and
   * matter only while the user waits for activation; a sign-in lock not cleared stays until an
   * admin ends it, as it would have without the activation; the unlock's entry, stored ahead of
   * the clear, is written by the sweep when it cannot be now.
   */
  async function afterActivation(ref: UserRef, ip: string): Promise<void> {
    const logged = (what: string) => (err: unknown) => {
      deps.logger.warn({ err: (err as Error).message, enterpriseId: ref.enterpriseId }, `activation completed; ${what}`);
    };
    await deps.throttle.succeeded(ref, ip).catch(logged('activation throttle not reset'));
    await settleOwedActivity(deps, ref).catch(logged('activity entry not written; the sweep writes it'));
    await deps.endSignInLock(ref).catch(logged('sign-in lock not cleared'));
  }

  /**
   * Known and unknown users take the same path: one throttle admission in Redis, one user read
   * (both at once), the same HMACs and constant-time comparisons; only a right code does more. So
   * neither the answers nor their timing tell whether a user exists (measured in bench/).
   */
  async function check(command: ActivateCommand): Promise<ActivationResult> {
    const at = now();
    const device = command.device ? toDevice(command.device, at) : undefined;
    const ref = { enterpriseId: command.enterpriseId, userId: command.userId };
    const [admitted, found] = await Promise.allSettled([deps.throttle.admit(ref, command.ip), deps.users.findActivationState(ref)]);
    if (admitted.status === 'rejected') throw admitted.reason;
    if (found.status === 'rejected') throw found.reason;
    const user = found.value;
    // A blocked user has nothing to activate: answered exactly as an unknown one, so the answer
    // tells a holder of a phished code nothing, and no device key is registered during the block.
    const activation = user && !user.blocked && PENDING_STATUSES.includes(user.status) ? user.activation : undefined;
    const right = activation
      ? verifyActivationCode(userSubject(ref), command.activationCode, activation.codeDigest, deps.keys.hmacKey)
      : verifyActivationCode(dummySubject, command.activationCode, dummyDigest, deps.keys.hmacKey);
    if (right && activation) {
      // Expiry is told only to a caller who knows the code: it would otherwise reveal the user.
      if (activation.expiresAt.getTime() <= at.getTime()) throw activationExpired();
      const owed = owedActivityEntry('user.activated', { type: 'user' }, at);
      if (await deps.users.completeActivation(ref, activation.issue, device, at, owed)) {
        await afterActivation(ref, command.ip);
        // The key the activation message names: shown by the app, so the person can tell the
        // real service (which knows it) from a look-alike that only captured the code.
        const verificationKey = decryptSecret(activation.verificationKeyEncrypted, deps.keys.encryptionKey, userSubject(ref));
        return { userId: command.userId, status: 'ACTIVE', verificationKey, ...(device ? { deviceId: device.deviceId } : {}) };
      }
    }
    throw wrongCode(Math.max(deps.throttle.maxFailures - admitted.value, 0));
  }

  /**
   * The new code is stored: that is the re-issue (its messages go out through the queue, or the
   * activation sweep finds the unsent code). What follows must not answer an error that invites
   * another re-issue: a throttle not reset is logged (the admin can re-issue again), the entry is
   * owed on the user and written by the sweep when it cannot be now. The queue's job id is the
   * issue's, so finishing twice sends once.
   */
  async function finishReissue(ref: UserRef, issue: number): Promise<void> {
    const logged = (what: string) => (err: unknown) =>
      deps.logger.warn({ err: (err as Error).message, enterpriseId: ref.enterpriseId }, `activation code re-issued; ${what}`);
    await deps.throttle.reset(ref).catch(logged('activation throttle not reset'));
    await settleOwedActivity(deps, ref).catch(logged('activity entry not written; the sweep writes it'));
    // No dispatch priority: a re-issue is an operator's, for one person waiting, and takes no
    // enterprise budget to derive one from (docs/operations.md, dispatch slots).
    await deps.queueActivation(ref, issue);
  }

  return {
    async activate(command: ActivateCommand): Promise<ActivationResult> {
      const started = performance.now();
      try {
        return await check(command);
      } catch (err) {
        // The path above is the same for known and unknown users, but a found user's document
        // still costs the store a little more to send than an empty answer (a fraction of a
        // millisecond, measurable over a few hundred pairs). Refusals therefore answer at a fixed
        // floor after arrival, which hides such differences whenever the work fits under it, and
        // slows a guesser for free. A right code is answered at once.
        const left = deps.failureFloorMs - (performance.now() - started);
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
        throw err;
      }
    },

    /**
     * Admin: a new generated code (throttle reset, new expiry), sent like at enrollment; recorded.
     * Also the way back for a user whose code a block ended (after unblocking).
     */
    async reissue(
      ref: UserRef,
      comments?: string,
      claim?: { id: string; resumed: boolean },
    ): Promise<{ userId: string; status: string; activationExpiresAt: string }> {
      const user = await deps.users.findUser(ref);
      if (!user) throw new NotFoundError('User not found');
      if (!user.activation || !PENDING_STATUSES.includes(user.status)) throw userExists(user);
      // A blocked user is sent nothing, and could not use the code before being unblocked anyway.
      if (user.blocked) throw new ConflictError('User is blocked; unblock the user before issuing a new code', { error: 'Invalid data.' });
      if (!user.emailId && !user.mobileNumber)
        throw new ConflictError('User has no emailId or mobileNumber to send a code to', { error: 'Invalid data.' });
      refuseActivationOnlyBySmsOutsideCountries(ref, user, deps.smsCountries, deps.logger);
      // A retry of a keyed re-issue whose request died after storing the code: that code is the
      // re-issue. Its remaining steps are finished (each is idempotent on the issue) and it is answered.
      if (claim?.resumed && user.activation.claimId === claim.id) {
        await finishReissue(ref, user.activation.issue);
        return { userId: ref.userId, status: user.status, activationExpiresAt: user.activation.expiresAt.toISOString() };
      }
      const at = now();
      const issue = user.activation.issue + 1;
      const code = generateActivationCode();
      const subject = userSubject(ref);
      const verificationKey = decryptSecret(user.activation.verificationKeyEncrypted, deps.keys.encryptionKey, subject);
      const activation = {
        codeDigest: digestActivationCode(subject, code, deps.keys.hmacKey),
        verificationKeyEncrypted: encryptSecret(verificationKey, deps.keys.encryptionKey, subject),
        codeEncrypted: encryptSecret(code, deps.keys.encryptionKey, `${subject}:${issue}`),
        issue,
        expiresAt: new Date(at.getTime() + deps.codeTtlSeconds * 1000),
        ...(claim ? { claimId: claim.id } : {}),
      };
      const owed = owedActivityEntry('user.activation-reissued', { type: 'admin' }, at, comments);
      if (!(await deps.users.replaceActivation(ref, user.activation.issue, activation, at, owed))) {
        throw new ConflictError('The activation changed meanwhile; try again', { error: 'Invalid data.' });
      }
      await finishReissue(ref, issue);
      return { userId: ref.userId, status: user.status, activationExpiresAt: activation.expiresAt.toISOString() };
    },
  };
}

export type ActivationService = ReturnType<typeof createActivationService>;
