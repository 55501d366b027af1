import type { ActivityActor, ActivityRepository } from '../activity/activity.repository.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { User } from '../users/user.types.js';
import type { PasskeyChangeNotice } from './passkey-change-notice.js';
import type { PasskeysRepository } from './passkeys.repository.js';

export interface PasskeyRemovalDeps {
  passkeys: Pick<PasskeysRepository, 'remove'>;
  activity: Pick<ActivityRepository, 'append'>;
  /** Tells the user the passkey was removed (after it is). */
  changeNotice: Pick<PasskeyChangeNotice, 'send'>;
  now?: () => Date;
}

/**
 * Removes one passkey of the user (by the user themself or an admin); it can no longer sign in
 * from then on, and the user is told (a removal by someone holding a stolen session, or by
 * mistake, does not go unseen; a DELETED user is not written to). 404 when the user has no
 * passkey by that id, including one of another user or enterprise, and when it was removed
 * already (a retried removal tells the caller it is gone).
 */
export async function removePasskey(
  deps: PasskeyRemovalDeps,
  user: User,
  passkeyId: string,
  actor: ActivityActor,
  comments?: string,
): Promise<void> {
  const removed = await deps.passkeys.remove(user, passkeyId);
  if (!removed) throw new NotFoundError('Passkey not found');
  const ref = { enterpriseId: user.enterpriseId, userId: user.userId };
  await deps.activity.append({
    actor,
    action: 'user.passkey-removed',
    ...ref,
    comments: comments === undefined ? `passkey ${passkeyId}` : `passkey ${passkeyId}: ${comments}`,
  });
  if (user.status !== 'DELETED') await deps.changeNotice.send('removed', user, removed, (deps.now ?? (() => new Date()))());
}
