import { randomInt, timingSafeEqual } from 'node:crypto';
import { MAX_NUMBER_ATTEMPTS, type NotificationAction } from './notification.types.js';

/** Two random digits (`00` to `99`) the enterprise shows and the user types back. */
export function generateMatchingNumber(): string {
  return String(randomInt(0, 100)).padStart(2, '0');
}

/** Constant-time comparison of the number the user sent with the stored one. */
export function matchesNumber(expected: string, sent: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(sent, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether answering with this action needs the matching number: what the action says, else only
 * the first action (approving). A person being push-bombed has no number to type, so rejecting
 * or reporting fraud must never need one.
 */
export function actionRequiresNumber(actions: readonly NotificationAction[], index: number): boolean {
  return actions[index]?.requiresNumber ?? index === 0;
}

export function needsNumber(actions: readonly NotificationAction[], response: string): boolean {
  return actionRequiresNumber(
    actions,
    actions.findIndex((a) => a.action === response),
  );
}

/** Tries left after `attempts` wrong numbers were counted. */
export function triesLeftAfter(attempts: number): number {
  return Math.max(MAX_NUMBER_ATTEMPTS - attempts, 0);
}
