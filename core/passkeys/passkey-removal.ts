import type { ActivityActor } from '../activity/activity.repository.js';
import { NotFoundError } from '../platform/errors/app-error.js';
import { owedActivityEntry } from '../users/owed-activity.js';
import { madeEntriesAhead, oweAhead, settleMadeAhead, withdrawAhead, type OwedAheadStores } from '../users/owed-activity-ahead.js';
import type { User } from '../users/user.types.js';
import { passkeyAdded, passkeyRemoved } from './passkey-activity.js';
import type { PasskeyChangeNotice } from './passkey-change-notice.js';
import type { PasskeysRepository } from './passkeys.repository.js';

export interface PasskeyRemovalDeps extends OwedAheadStores {
  passkeys: Pick<PasskeysRepository, 'remove' | 'exists'>;
  /** Tells the user the passkey was removed (after it is). */
  changeNotice: Pick<PasskeyChangeNotice, 'send'>;
  now?: () => Date;
}

/**
 * Removes one passkey of the user (by the user themself or an admin); it can no longer sign in
 * from then on, and the user is told (a removal by someone holding a stolen session, or by
 * mistake, does not go unseen; a DELETED user is not written to). 404 when the user has no
 * passkey by that id, including one of another user or enterprise, and when it was removed
 * already (a retried removal tells the caller it is gone). The `user.passkey-removed` entry is
 * owed on the user before the removal (passkey-activity.ts): the answer is 204 once the passkey
 * is gone, also when the record cannot be written then.
 */
export async function removePasskey(
  deps: PasskeyRemovalDeps,
  user: User,
  passkeyId: string,
  actor: ActivityActor,
  comments?: string,
): Promise<void> {
  const ref = { enterpriseId: user.enterpriseId, userId: user.userId };
  // Looked for first, so a removal of nothing owes nothing (and the sweep never takes a passkey
  // that never existed for a removed one).
  if (!(await deps.passkeys.exists(ref, passkeyId))) throw new NotFoundError('Passkey not found');
  const at = (deps.now ?? (() => new Date()))();
  const owed = owedActivityEntry(
    'user.passkey-removed',
    actor,
    at,
    comments === undefined ? `passkey ${passkeyId}` : `passkey ${passkeyId}: ${comments}`,
    { ahead: passkeyRemoved(passkeyId) },
  );
  const added = await madeEntriesAhead(deps, ref, passkeyAdded(passkeyId));
  if (!(await oweAhead(deps, ref, owed, added))) throw new NotFoundError('Passkey not found');
  const removed = await deps.passkeys.remove(user, passkeyId);
  if (!removed) {
    // Another removal took it meanwhile, and records it.
    await withdrawAhead(deps, ref, owed);
    throw new NotFoundError('Passkey not found');
  }
  await settleMadeAhead(deps, ref, owed, added);
  if (user.status !== 'DELETED') await deps.changeNotice.send('removed', user, removed, at);
}
