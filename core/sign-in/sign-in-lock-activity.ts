import type { ActivityActor } from '../activity/activity.repository.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { owedActivityEntry, type ChangeChecks } from '../users/owed-activity.js';
import { madeEntriesAhead, oweAhead, settleMadeAhead, withdrawAhead, type OwedAheadStores } from '../users/owed-activity-ahead.js';
import type { ChangeAhead } from '../users/users.repository.js';
import type { SignInFailuresRepository } from './sign-in-failures.repository.js';

/**
 * A sign-in lock's `user.sign-in-locked` and `user.sign-in-unlocked` entries are stored on the user
 * ahead of the write to the lock (core/users/owed-activity-ahead.ts), marked with the lock's time
 * (`lockedAt`, which the lock's write sets): the sweep writes a locked entry while that lock is in
 * place, an unlocked one once it is not. Ending a lock first stores a copy of its locked entry
 * still owed, not waiting on the lock (it is in place, so it was set), so that the lock stays
 * recorded once it is gone. Mistaken for made, after a process died before taking its entry off:
 * an unlock whose lock something else ended meanwhile (another unlock, a completed activation).
 */
export const signInLocked = (lockedAt: Date): ChangeAhead => ({ change: 'sign-in-locked', key: lockedAt.toISOString() });
export const signInUnlocked = (lockedAt: Date): ChangeAhead => ({ change: 'sign-in-unlocked', key: lockedAt.toISOString() });

/** The checks of the sweep for these two changes. */
export function signInLockChangeChecks(failures: Pick<SignInFailuresRepository, 'lockedAt'>): ChangeChecks {
  return {
    'sign-in-locked': async (ref, key) => (await failures.lockedAt(ref))?.toISOString() === key,
    'sign-in-unlocked': async (ref, key) => (await failures.lockedAt(ref))?.toISOString() !== key,
  };
}

export interface SignInLockEndDeps extends OwedAheadStores {
  failures: Pick<SignInFailuresRepository, 'lockedAt' | 'clear'>;
}

/**
 * Ends the user's sign-in lock and starts the count of wrong codes over, recorded as
 * `user.sign-in-unlocked` by `actor` with `comments` when there was a lock to end (the entry
 * stored ahead; a record that cannot be written is logged, the sweep writes it). True when there was.
 */
export async function endSignInLock(deps: SignInLockEndDeps, ref: UserRef, actor: ActivityActor, comments?: string): Promise<boolean> {
  const at = new Date();
  const lockedAt = await deps.failures.lockedAt(ref);
  if (lockedAt === undefined) {
    if (!(await deps.failures.clear(ref))) return false;
    // Locked between the read and the clear (milliseconds): owed after the fact.
    const late = owedActivityEntry('user.sign-in-unlocked', actor, at, comments);
    if (await oweAhead(deps, ref, late)) await settleMadeAhead(deps, ref, late);
    return true;
  }
  const owed = owedActivityEntry('user.sign-in-unlocked', actor, at, comments, { ahead: signInUnlocked(lockedAt) });
  const locked = await madeEntriesAhead(deps, ref, signInLocked(lockedAt));
  await oweAhead(deps, ref, owed, locked);
  const ended = await deps.failures.clear(ref);
  if (ended) await settleMadeAhead(deps, ref, owed, locked);
  else await withdrawAhead(deps, ref, owed); // ended meanwhile by someone else, who records it
  return ended;
}
