import type { ChangeChecks } from '../users/owed-activity.js';
import type { ChangeAhead } from '../users/users.repository.js';
import type { PasskeysRepository } from './passkeys.repository.js';

/**
 * A passkey's `user.passkey-added` and `user.passkey-removed` entries are stored on the user ahead
 * of the passkey's write (core/users/owed-activity-ahead.ts), marked with the passkey's id: the
 * sweep writes an added entry while the user has that passkey, a removed one once the user no
 * longer has it. A removal first stores a copy of any added entry of the passkey still owed, not
 * waiting on the passkey (it exists, so it was added), so that the add stays recorded once the
 * passkey is gone. Mistaken for made, after a process died: a removal racing another removal of
 * the same passkey (recorded twice, by both callers).
 */
export const passkeyAdded = (passkeyId: string): ChangeAhead => ({ change: 'passkey-added', key: passkeyId });
export const passkeyRemoved = (passkeyId: string): ChangeAhead => ({ change: 'passkey-removed', key: passkeyId });

/** The checks of the sweep for these two changes. */
export function passkeyChangeChecks(passkeys: Pick<PasskeysRepository, 'exists'>): ChangeChecks {
  return {
    'passkey-added': (ref, passkeyId) => passkeys.exists(ref, passkeyId),
    'passkey-removed': async (ref, passkeyId) => !(await passkeys.exists(ref, passkeyId)),
  };
}
