import type { User } from '../../core/users/user.types.js';

/**
 * The user without secrets: no code, digest, verification key or client of record. `attemptsLeft`
 * (from the activation throttle) is given by routes that show a pending activation.
 */
export function toUserResponse(user: User, attemptsLeft?: number): Record<string, unknown> {
  const { activation, device } = user;
  return {
    userId: user.userId,
    loginId: user.loginId,
    primaryGroup: user.primaryGroup,
    secondaryGroups: user.secondaryGroups.join(','),
    firstName: user.firstName,
    lastName: user.lastName,
    ...(user.emailId !== undefined ? { emailId: user.emailId } : {}),
    ...(user.mobileNumber !== undefined ? { mobileNumber: user.mobileNumber } : {}),
    status: user.status,
    sourceType: user.sourceType,
    ...(user.comments !== undefined ? { comments: user.comments } : {}),
    ...(activation
      ? {
          activation: {
            expiresAt: activation.expiresAt.toISOString(),
            ...(attemptsLeft !== undefined ? { attemptsLeft, locked: attemptsLeft === 0 } : {}),
          },
        }
      : {}),
    ...(device
      ? { device: { deviceId: device.deviceId, publicKeyJwk: device.publicKeyJwk, registeredAt: device.registeredAt.toISOString() } }
      : {}),
    ...(user.server_bio_template_hash !== undefined
      ? {
          server_bio_template_hash: user.server_bio_template_hash,
          server_bio_template_hash_created_ts: user.server_bio_template_hash_created_ts?.toISOString(),
          server_bio_template_source: user.server_bio_template_source,
        }
      : {}),
    ...(user.activatedAt ? { activatedAt: user.activatedAt.toISOString() } : {}),
    ...(user.blocked
      ? {
          blocked: true,
          blockedAt: user.blocked.at.toISOString(),
          ...(user.blocked.reason !== undefined ? { blockedReason: user.blocked.reason } : {}),
        }
      : {}),
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}
