import type { Connection } from 'mongoose';
import { decryptSecret } from '../crypto/secret-box.js';
import { SEALED_COLLECTIONS } from './sealed-values.js';

/** The server secrets stored in MongoDB do not open with this process's keys. */
export class SealedWithAnotherKeyError extends Error {
  constructor(name: string) {
    super(
      `the server secret ${name} stored in MongoDB (server_secrets) does not open with this OTP_ENCRYPTION_KEY (nor OTP_ENCRYPTION_KEYS_PREVIOUS): it was sealed with another key (give every process the keys the API processes have) or the stored document was altered`,
    );
    this.name = 'SealedWithAnotherKeyError';
  }
}

/**
 * Opens every sealed server secret (the signing keys, the VAPID key) with `key` before a worker
 * takes work: a worker given another key would fail every message it reads the code of. The
 * server secrets are the proof because the API refuses to start unless its keys open them, so
 * they are sealed with the deployment's key; a single old row (a code sealed with a key dropped
 * long ago) must not stop a worker, and opens as before when its job comes.
 */
export async function checkSealingKeyAtStart(connection: Connection, key: Buffer): Promise<void> {
  const db = connection.db;
  if (!db) throw new Error('MongoDB is not connected');
  const secrets = SEALED_COLLECTIONS.find((spec) => spec.collection === 'server_secrets');
  if (!secrets) return;
  for (const doc of await db.collection(secrets.collection).find(secrets.filter).toArray()) {
    for (const value of secrets.values(doc)) {
      try {
        decryptSecret(value.sealed, key, value.context);
      } catch {
        throw new SealedWithAnotherKeyError(String(doc.name));
      }
    }
  }
}
