import { createPublicKey } from 'node:crypto';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors/app-error.js';
import type { OtpKeys } from '../otp/otp-keys.js';
import { decryptSecret, encryptSecret } from '../otp/secret-box.js';
import { digestActivationCode, generateActivationCode, verifyActivationCode } from './activation-code.js';
import type { ActivationLimits } from './activation-rate-limits.js';
import { userExists } from './enrollment.service.js';
import { MAX_ACTIVATION_ATTEMPTS, PENDING_STATUSES, type UserDevice } from './user.types.js';
import type { UsersRepository } from './users.repository.js';

export interface ActivateCommand {
  userId: string;
  activationCode: string;
  device?: { deviceId: string; publicKeyJwk: { kty: string; crv: string; x: string; y: string; d?: unknown } };
}

export interface ActivationDeps {
  users: UsersRepository;
  limits: Pick<ActivationLimits, 'phantomAttempt'>;
  /** Queues the activation messages of a code issue; tolerates Redis being down. */
  queueActivation: (userId: string, issue: number) => Promise<void>;
  keys: OtpKeys;
  codeTtlSeconds: number;
  now?: () => Date;
}

export const wrongCode = (attemptsLeft: number) => new ValidationError('Invalid activation code', { extra: { attemptsLeft } });
export const activationLocked = () => new AppError('ACTIVATION_LOCKED', 423, 'Too many wrong activation codes; ask for a new activation code');
export const activationExpired = () => new AppError('ACTIVATION_EXPIRED', 410, 'Activation code expired; ask for a new activation code');

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

  /** Nothing to activate (unknown, ACTIVE, DELETED): answered exactly like a wrong code. */
  async function phantom(userId: string, code: string): Promise<never> {
    // Same HMAC work as a real check, so timing says little about whether the user exists.
    verifyActivationCode(userId, code, digestActivationCode(userId, '\u0000', deps.keys.hmacKey), deps.keys.hmacKey);
    const left = await deps.limits.phantomAttempt(userId);
    if (left === 'LOCKED') throw activationLocked();
    throw wrongCode(left);
  }

  return {
    async activate(command: ActivateCommand): Promise<{ userId: string; status: 'ACTIVE'; deviceId?: string }> {
      const at = now();
      const device = command.device ? toDevice(command.device, at) : undefined;
      const user = await deps.users.findByUserId(command.userId);
      if (!user || !user.activation || !PENDING_STATUSES.includes(user.status)) return phantom(command.userId, command.activationCode);
      if (user.activation.failedAttempts >= MAX_ACTIVATION_ATTEMPTS) throw activationLocked();

      const counted = await deps.users.reserveActivationAttempt(command.userId, at);
      if (!counted) throw activationLocked();
      const right = verifyActivationCode(command.userId, command.activationCode, counted.codeDigest, deps.keys.hmacKey);
      if (right) {
        // Expiry is told only to a caller who knows the code: it would otherwise reveal the user.
        if (counted.expiresAt.getTime() <= at.getTime()) throw activationExpired();
        if (await deps.users.completeActivation(command.userId, counted.issue, device, at)) {
          return { userId: command.userId, status: 'ACTIVE', ...(device ? { deviceId: device.deviceId } : {}) };
        }
      }
      throw wrongCode(Math.max(MAX_ACTIVATION_ATTEMPTS - counted.failedAttempts, 0));
    },

    /** Admin: a new generated code (attempts reset, new expiry), sent like at enrollment. */
    async reissue(userId: string): Promise<{ userId: string; status: string; activationExpiresAt: string }> {
      const user = await deps.users.findByUserId(userId);
      if (!user) throw new NotFoundError('User not found');
      if (!user.activation || !PENDING_STATUSES.includes(user.status)) throw userExists(user);
      if (!user.emailId && !user.mobileNumber) throw new ConflictError('User has no emailId or mobileNumber to send a code to', { error: 'Invalid data.' });
      const at = now();
      const issue = user.activation.issue + 1;
      const code = generateActivationCode();
      const verificationKey = decryptSecret(user.activation.verificationKeyEncrypted, deps.keys.encryptionKey, userId);
      const activation = {
        codeDigest: digestActivationCode(userId, code, deps.keys.hmacKey),
        verificationKeyEncrypted: encryptSecret(verificationKey, deps.keys.encryptionKey, userId),
        codeEncrypted: encryptSecret(code, deps.keys.encryptionKey, `${userId}:${issue}`),
        issue,
        expiresAt: new Date(at.getTime() + deps.codeTtlSeconds * 1000),
        failedAttempts: 0,
      };
      if (!(await deps.users.replaceActivation(userId, user.activation.issue, activation, at))) {
        throw new ConflictError('The activation changed meanwhile; try again', { error: 'Invalid data.' });
      }
      await deps.queueActivation(userId, issue);
      return { userId, status: user.status, activationExpiresAt: activation.expiresAt.toISOString() };
    },
  };
}

export type ActivationService = ReturnType<typeof createActivationService>;
