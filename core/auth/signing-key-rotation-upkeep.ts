import type { Logger } from '../platform/logger/logger.js';
import { recordRotationEntry, type RotationEntryStores } from './signing-key-rotation-entry.js';
import type { StoredKeys } from './signing-key.service.js';

export interface RotationUpkeepOptions extends RotationEntryStores {
  logger: Logger;
}

/**
 * What an API process does with the rotations it has just read: writes the activity entry of any
 * rotation whose process died before writing it. Any number of processes may do it at the same
 * moment: the entry goes in under the rotation's own id. It writes nothing when nothing is due,
 * and never throws: the keys were read, and the next read tries again.
 */
export function createRotationUpkeep(options: RotationUpkeepOptions): (stored: StoredKeys) => Promise<void> {
  return async (stored) => {
    try {
      for (const { name, rotation } of stored.rotations)
        if (rotation.entry && !rotation.entry.recorded)
          await recordRotationEntry(options, name, new Date(rotation.rotatedAt), rotation.entry);
    } catch (err) {
      options.logger.warn({ err }, 'signing key rotations: an entry could not be written; the next read of the keys tries again');
    }
  };
}
