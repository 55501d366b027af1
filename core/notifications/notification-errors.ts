import { AppError, ConflictError, ForbiddenError, GoneError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { Refusal, StoredAnswer } from './notification-states.js';
import type { FinalStatus } from './notification.types.js';

export const notificationNotFound = () => new NotFoundError('Notification not found');
export const userNotFound = () => new NotFoundError('User not found');
/** The user API's refusal of a blocked user (the token check's `user_blocked`), raised by an answer that crossed the block. */
export const userBlocked = () => new ForbiddenError('USER_BLOCKED', 'User is blocked', { error: 'user_blocked' });
export const isUserBlockedError = (err: unknown): boolean => err instanceof AppError && err.code === 'USER_BLOCKED';
/**
 * Already ended. An answered one also says which answer it holds (`action`, `is_ds_verified`): a
 * client whose answer was stored but whose connection dropped before the 200 recognises its own
 * answer when it sends it again. Only the notification's holder gets this far (404 first).
 */
export const notificationEnded = (status: FinalStatus, answer?: StoredAnswer) =>
  new ConflictError(`Notification is ${status}`, {
    extra: {
      notificationStatus: status,
      ...(answer ? { action: answer.action, is_ds_verified: answer.isDsVerified } : {}),
    },
  });
export const notificationExpired = () =>
  new GoneError('NOTIFICATION_EXPIRED', 'Notification expired', { extra: { notificationStatus: 'EXPIRED' } });
export const invalidArgument = (field: string, rule: string) => new ValidationError(`Invalid field ${field}: ${rule}`);

/** The error a refused write (see notification-states.ts) is answered with. */
export function refusalError(refusal: Refusal): AppError {
  switch (refusal.kind) {
    case 'not-found':
      return notificationNotFound();
    case 'expired':
      return notificationExpired();
    case 'ended':
      return notificationEnded(refusal.status, refusal.answer);
  }
}
