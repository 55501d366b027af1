import type { ActivityRepository } from '../activity/activity.repository.js';
import { appendOwedEntry, owedActivityEntry } from './owed-activity.js';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { userSubject, type UserRef } from '../platform/tenancy/enterprise-id.js';
import { ConflictError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import { encryptSecret } from '../crypto/secret-box.js';
import { digestActivationCode, generateActivationCode, generateVerificationKey } from './activation-code.js';
import type { ActivationDeliveries } from './activation-deliveries.service.js';
import type { EnrollmentRequest } from './enrollment-request.validator.js';
import type { FaceAnalyzer } from './face-analyzer.client.js';
import { checkSelfieImage, type CheckedSelfie } from './selfie-image.checker.js';
import type { User } from './user.types.js';
import type { UsersRepository } from './users.repository.js';

export interface EnrollmentDeps {
  users: UsersRepository;
  /** The names a user of the enterprise may not join: its own group of the name, else the shared one (groups.repository.ts). */
  groups: { findMissingGroupNames: (enterpriseId: string, names: string[]) => Promise<string[]> };
  /** Queues the enrollment job of one code issue, with the dispatch priority of its messages when given. */
  enqueueEnrollment: (data: UserRef & { issue: number }, priority?: number) => Promise<void>;
  /** The job's own work, run in-process when the job cannot be queued (Redis down). */
  activationDeliveries: ActivationDeliveries;
  faceAnalyzer?: FaceAnalyzer;
  activity: Pick<ActivityRepository, 'appendOnce'>;
  keys: OtpKeys;
  codeTtlSeconds: number;
  logger: Logger;
  now?: () => Date;
}

// Error label `Invalid data.` on every 409 of Add user.
const conflict = (message: string, extra?: Record<string, unknown>) => new ConflictError(message, { error: 'Invalid data.', extra });
export const userExists = (user: Pick<User, 'status'>) => conflict(`User is ${user.status}`, { userStatus: user.status });
const missingGroup = (name: string) => conflict(`The group name : ${name} does not exist in the system.`);
const groupsNamed = (request: EnrollmentRequest) => [request.primaryGroup, ...request.secondaryGroups];

export function createEnrollmentService(deps: EnrollmentDeps) {
  const now = deps.now ?? (() => new Date());

  /**
   * Business checks, in order: user exists, primary among secondaries, missing group, mobile held.
   * The three reads do not depend on each other, so they go out together (one wait instead of
   * three); the answer is still the first rule broken in that order. None of them guards the
   * insert (the unique indexes and the groups' re-read after it do), so reading them at once
   * changes only when they are read, not what is guaranteed.
   */
  async function checkBusinessRules(enterpriseId: string, request: EnrollmentRequest): Promise<void> {
    const [existing, [missing], mobileHolder] = await Promise.all([
      deps.users.findUser({ enterpriseId, userId: request.userId }),
      deps.groups.findMissingGroupNames(enterpriseId, groupsNamed(request)),
      request.mobileNumber === undefined ? undefined : deps.users.findLiveByMobile({ enterpriseId }, request.mobileNumber),
    ]);
    if (existing) throw userExists(existing);
    if (request.secondaryGroups.includes(request.primaryGroup)) throw conflict('Primary and secondary group name cannot be same.');
    if (missing !== undefined) throw missingGroup(missing);
    if (mobileHolder) throw conflict('Mobile number already registered');
  }

  /** The checks above ran before the insert; the unique indexes settle races between requests. */
  async function conflictOfDuplicate(enterpriseId: string, request: EnrollmentRequest): Promise<ConflictError> {
    const winner = await deps.users.findUser({ enterpriseId, userId: request.userId });
    return winner ? userExists(winner) : conflict('Mobile number already registered');
  }

  /**
   * Undoes the insert (once more if the first try fails). When both fail the request still
   * fails (500), but an operator is told what was left: a user not yet activated, maybe naming a
   * removed group (no user id in the log), whose activity entry the enrollment worker's sweep writes.
   */
  async function removeOrReport(ref: UserRef, createdAt: Date): Promise<void> {
    try {
      await deps.users.removeUndoneEnrollment(ref, createdAt);
    } catch {
      try {
        await deps.users.removeUndoneEnrollment(ref, createdAt);
      } catch (err) {
        deps.logger.error(
          { err: (err as Error).message, enterpriseId: ref.enterpriseId, createdAt },
          'an enrollment that failed could not be undone: a user of this enterprise enrolled at createdAt is left, not activated (its activity entry is written by the sweep)',
        );
        throw err;
      }
    }
  }

  /** `priority`: the dispatch priority of the issue's messages (dispatch-fairness.ts; none: first-come-first-served). */
  async function queueActivation(ref: UserRef, issue: number, priority?: number): Promise<void> {
    try {
      await deps.enqueueEnrollment({ enterpriseId: ref.enterpriseId, userId: ref.userId, issue }, priority);
    } catch (err) {
      // Accepted anyway: do the job's work here; its dispatch rows are swept if Redis stays down.
      // No userId in the log line: userIds are often e-mail addresses.
      deps.logger.warn({ err: (err as Error).message }, 'enrollment enqueue failed; preparing activation in-process');
      await deps.activationDeliveries.prepareAndQueue(ref, issue, priority).catch((inner: unknown) => {
        deps.logger.error({ err: inner }, 'activation could not be prepared; an admin can re-issue it');
      });
    }
  }

  return {
    /** Queues the activation messages of one code issue (also used by the admin re-issue). */
    queueActivation,

    /**
     * Enrolls the user in the calling client's enterprise (recorded in the activity record); the
     * user it made. `dispatchPriority`: that of the activation messages, from the enterprise's
     * enrollment budget (dispatch-fairness.ts).
     */
    async enroll(
      caller: { clientId: string; enterpriseId: string },
      request: EnrollmentRequest,
      dispatchPriority?: number,
    ): Promise<{ userId: string }> {
      const { clientId, enterpriseId } = caller;
      const subject = userSubject({ enterpriseId, userId: request.userId });
      // Local image checks are request validation; the analyzer (remote, slow) runs only for a
      // request that passed the business rules.
      const selfie: CheckedSelfie | undefined = request.selfieImage === undefined ? undefined : await checkSelfieImage(request.selfieImage);
      await checkBusinessRules(enterpriseId, request);
      if (selfie && deps.faceAnalyzer) await deps.faceAnalyzer.analyze(selfie);

      const createdAt = now();
      const generated = request.predefinedCode === undefined;
      const code = request.predefinedCode ?? generateActivationCode();
      const verificationKey = request.predefinedVerKey ?? generateVerificationKey();
      const issue = 1;
      const user: User = {
        enterpriseId,
        userId: request.userId,
        loginId: request.loginId,
        primaryGroup: request.primaryGroup,
        secondaryGroups: request.secondaryGroups,
        firstName: request.firstName,
        lastName: request.lastName,
        ...(request.emailId !== undefined ? { emailId: request.emailId } : {}),
        ...(request.mobileNumber !== undefined ? { mobileNumber: request.mobileNumber } : {}),
        status: request.preferredStatus,
        sourceType: request.sourceType,
        ...(request.comments !== undefined ? { comments: request.comments } : {}),
        clientId,
        activation: {
          codeDigest: digestActivationCode(subject, code, deps.keys.hmacKey),
          verificationKeyEncrypted: encryptSecret(verificationKey, deps.keys.encryptionKey, subject),
          // Only a generated code is sent; a predefined one is the caller's to hand out.
          ...(generated ? { codeEncrypted: encryptSecret(code, deps.keys.encryptionKey, `${subject}:${issue}`) } : {}),
          issue,
          expiresAt: new Date(createdAt.getTime() + deps.codeTtlSeconds * 1000),
        },
        ...(selfie
          ? {
              server_bio_template_hash: selfie.sha256,
              server_bio_template_hash_created_ts: createdAt,
              server_bio_template_source: 'SELFIE',
            }
          : {}),
        createdAt,
        updatedAt: createdAt,
      };
      // The entry is owed on the user from the insert on: a process that dies before writing it, or
      // whose undo below fails, leaves a user the enrollment worker's sweep records.
      const owed = owedActivityEntry('user.enrolled', { type: 'client', clientId }, createdAt, request.comments);
      try {
        await deps.users.insert(user, owed);
      } catch (err) {
        if (isDuplicateKeyError(err)) throw await conflictOfDuplicate(enterpriseId, request);
        throw err;
      }
      // A group deletion may have counted its users between the check and the insert: read the
      // groups again, and undo the insert, before anything else refers to the user, if one is
      // gone or being deleted (the protocol: group-deletion.service.ts).
      let gone: string | undefined;
      try {
        [gone] = await deps.groups.findMissingGroupNames(enterpriseId, groupsNamed(request));
      } catch (err) {
        await removeOrReport({ enterpriseId, userId: user.userId }, createdAt); // groups unknown: the failed request leaves nothing
        throw err;
      }
      if (gone !== undefined) {
        await removeOrReport({ enterpriseId, userId: user.userId }, createdAt);
        throw missingGroup(gone);
      }
      try {
        await appendOwedEntry(deps, { enterpriseId, userId: user.userId }, owed);
      } catch (err) {
        // The caller is told the enrollment failed, so it leaves nothing: a user left stored would
        // be sent a code by the activation sweep and make the caller's retry a 409. (An append
        // whose answer was lost may leave its entry: a record of an attempt, never a user unrecorded.)
        await removeOrReport({ enterpriseId, userId: user.userId }, createdAt);
        throw err;
      }
      // The record holds it: taken off the user (left on, the sweep finds it written and takes it
      // off). That and queueing the code's messages go out together: neither reads what the other
      // writes, neither throws, and a process dying between or during them leaves the same as
      // before (an entry the sweep finds written; a code the activation sweep sends).
      const settled = deps.users
        .settledOwedActivity({ enterpriseId, userId: user.userId }, [owed.id])
        .catch((err: unknown) =>
          deps.logger.warn({ err: (err as Error).message, enterpriseId }, 'enrollment recorded; owed entry left to the sweep'),
        );
      await Promise.all([settled, generated ? queueActivation({ enterpriseId, userId: user.userId }, issue, dispatchPriority) : undefined]);
      return { userId: user.userId };
    },
  };
}

export type EnrollmentService = ReturnType<typeof createEnrollmentService>;
