import type { Connection } from 'mongoose';
import { prepareStoreAtStart } from '../core/migrations/store-check.js';
import { checkSealingKeyAtStart } from '../core/sealing/sealing-key-check.js';
import type { Logger } from '../core/platform/logger/logger.js';

/**
 * A worker's store check at start: the schema it needs, then its OTP_ENCRYPTION_KEY (and the
 * previous keys) against what the service sealed. Every worker opens sealed values (codes of
 * deliveries and activations, callback secrets, the VAPID key), so a worker given another key
 * stops here, before any job is taken, instead of failing each job it runs.
 */
export function prepareWorkerStore(encryptionKey: Buffer) {
  return async (connection: Connection, logger: Logger): Promise<void> => {
    await prepareStoreAtStart(connection, logger);
    await checkSealingKeyAtStart(connection, encryptionKey);
  };
}
