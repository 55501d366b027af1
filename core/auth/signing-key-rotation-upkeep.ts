import type { Logger } from '../platform/logger/logger.js';
import { removedAt } from './signing-key-chains.js';
import { recordRotationEntry, type RotationEntryStores } from './signing-key-rotation-entry.js';
import type { ServerSecretsRepository } from './server-secrets.repository.js';
import type { StoredKeys } from './signing-key.service.js';

/**
 * How long a rotation's document is kept once every key it made has been removed. Each process
 * removes a key at the stored moment on its own clock; deleting the document a while later means a
 * process whose clock is behind still drops the key on its own clock, not early at its next read.
 */
export const REMOVED_ROTATION_KEPT_MS = 60 * 60 * 1000;

/**
 * The rotation documents no process needs any more: every key they made was removed (every token
 * it signed has expired, the RSA key's sign-in sessions included, or it was retired at once) at
 * least REMOVED_ROTATION_KEPT_MS ago, and their activity entry is written. Deleting one changes
 * nothing a process publishes or accepts: a key is removed only once a later key's retirement has
 * passed, and the latest such later key is not removed, so its document stays and keeps every
 * earlier key removed. The newest document always stays (its keys are the newest, never removed):
 * the next rotation is numbered after it, and its unique name stays the lock.
 */
export function removedRotations(stored: StoredKeys, now: number): string[] {
  const newest = stored.rotations.at(-1);
  return stored.rotations
    .filter((document) => document !== newest && document.rotation.entry?.recorded !== false)
    .filter(({ rotation }) =>
      rotation.keys.every(({ alg, sealed }) => {
        const chain = stored.chains.find((candidate) => candidate.alg === alg);
        const index = chain?.keys.findIndex((chained) => chained.key.kid === sealed.publicJwk.kid) ?? -1;
        return chain !== undefined && index >= 0 && removedAt(chain, index) + REMOVED_ROTATION_KEPT_MS <= now;
      }),
    )
    .map(({ name }) => name);
}

export interface RotationUpkeepOptions extends RotationEntryStores {
  secrets: Pick<ServerSecretsRepository, 'setServerSecretMember' | 'deleteServerSecrets'>;
  logger: Logger;
  now?: () => number;
}

/**
 * What an API process does with the rotations it has just read: writes the activity entry of any
 * rotation whose process died before writing it, and deletes the documents of rotations whose keys
 * are all long removed (so they are neither kept nor opened at every read for ever). Any number
 * of processes may do both at the same moment: the entry goes in under the rotation's own id, and
 * a document deleted twice is deleted once. It writes nothing when nothing is due, and never
 * throws: the keys were read, and the next read tries again.
 */
export function createRotationUpkeep(options: RotationUpkeepOptions): (stored: StoredKeys) => Promise<void> {
  const now = options.now ?? Date.now;
  return async (stored) => {
    try {
      for (const { name, rotation } of stored.rotations)
        if (rotation.entry && !rotation.entry.recorded)
          await recordRotationEntry(options, name, new Date(rotation.rotatedAt), rotation.entry);
      await options.secrets.deleteServerSecrets(removedRotations(stored, now()));
    } catch (err) {
      options.logger.warn(
        { err },
        'signing key rotations: an entry or a removed rotation could not be written; the next read of the keys tries again',
      );
    }
  };
}
