import type { ActivityActor, ActivityRepository } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import type { PasskeysRepository } from './passkeys.repository.js';

export interface PasskeyRemovalDeps {
  passkeys: Pick<PasskeysRepository, 'remove'>;
  activity: Pick<ActivityRepository, 'append'>;
}

/**
 * Removes one passkey of the user (by the user themself or an admin); it can no longer sign in
 * from then on. 404 when the user has no passkey by that id, including one of another user or
 * enterprise, and when it was removed already (a retried removal tells the caller it is gone).
 */
export async function removePasskey(
  deps: PasskeyRemovalDeps,
  ref: UserRef,
  passkeyId: string,
  actor: ActivityActor,
  comments?: string,
): Promise<void> {
  if (!(await deps.passkeys.remove(ref, passkeyId))) throw new NotFoundError('Passkey not found');
  await deps.activity.append({
    actor,
    action: 'user.passkey-removed',
    ...ref,
    comments: comments === undefined ? `passkey ${passkeyId}` : `passkey ${passkeyId}: ${comments}`,
  });
}
