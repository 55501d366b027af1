import type { Connection } from 'mongoose';
import { isMongoError, MONGO_CODES } from './mongo-error-codes.js';

/**
 * Where data migration steps record that they ran to their end: one document per step,
 * `{ _id: <step>, version, completedAt }`. A step whose work no index can find (which users'
 * numbers are keyed in which form) would otherwise read a whole collection on every run to change
 * nothing; with its record, a run costs one look-up by `_id`.
 */
const RECORDS = 'migrations';

/**
 * A step that records its completion. `version` names what the step does: a later version that
 * must go over the data again (another form of key) raises it, and a record of any other version,
 * older or newer (a rollback), counts as none.
 */
export interface RecordedStep {
  name: string;
  version: number;
}

interface CompletionRecord {
  _id: string;
  version: number;
  completedAt: Date;
}

const records = (connection: Connection) => connection.collection<CompletionRecord>(RECORDS);

/**
 * Whether this version of the step ran to its end: one look-up by `_id`. Reads only (a missing
 * collection is not created), so `npm run migrate -- --check` asks it too.
 */
export async function hasCompleted(connection: Connection, step: RecordedStep): Promise<boolean> {
  return (await records(connection).findOne({ _id: step.name, version: step.version }, { projection: { _id: 1 } })) !== null;
}

/**
 * Records that the step ran to its end. Written after its last write only: a run cut off anywhere
 * leaves no record (or the one it found, of another version), and the next run does the work.
 */
export async function recordCompleted(connection: Connection, step: RecordedStep, at = new Date()): Promise<void> {
  const write = (upsert: boolean) =>
    records(connection).updateOne({ _id: step.name }, { $set: { version: step.version, completedAt: at } }, { upsert });
  try {
    await write(true);
  } catch (err) {
    // Two runs at once both insert it: the one that lost sets the same fields on the other's record.
    if (!isMongoError(err, MONGO_CODES.DuplicateKey)) throw err;
    await write(false);
  }
}

/**
 * Removes the step's record, before a step that comes earlier writes data the recorded step must
 * go over again (users of before enterprises get their keys in the older form).
 */
export async function forgetCompleted(connection: Connection, step: RecordedStep): Promise<void> {
  await records(connection).deleteOne({ _id: step.name });
}
