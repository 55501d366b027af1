import { createHash } from 'node:crypto';
import type { ActivityActor, ActivityInput, ActivityRepository } from '../activity/activity.repository.js';
import type { ServerSecretsRepository } from './server-secrets.repository.js';

/** The activity entry of a rotation, kept in the rotation's document until the record has it. */
export interface StoredRotationEntry {
  /** False from the rotation's write until its entry is in the activity record. */
  recorded: boolean;
  actor: ActivityActor;
  signingKeys: { alg: string; kid: string; previousKid: string }[];
  comments?: string;
}

/** Where a rotation's entry is written, and where its document is told so. */
export interface RotationEntryStores {
  activity: Pick<ActivityRepository, 'appendOnce'>;
  secrets: Pick<ServerSecretsRepository, 'setServerSecretMember'>;
}

/**
 * The activity id of rotation `name`'s entry: the rotation's second (an ObjectId's first four
 * bytes, so the id sorts with its time like any other) and a digest of its name. Every process
 * writing the entry writes it under this one id, so the record takes it once.
 */
export function rotationEntryId(name: string, rotatedAt: Date): string {
  const seconds = Math.floor(rotatedAt.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return seconds + createHash('sha256').update(`signing-keys.rotated ${name}`).digest('hex').slice(0, 16);
}

/**
 * Writes rotation `name`'s `signing-keys.rotated` entry unless the record has it, then notes in
 * the rotation's document that it does. The rotation's write and the entry's are two writes, so
 * the process that rotated may die between them: the document says the entry is still to be
 * written, and every API process reading the keys writes it (core/auth/signing-key-rotation-upkeep.ts).
 * Any of them may do it at once, or after the entry but before the note: the id is the rotation's,
 * so the record holds one entry whatever happens.
 */
export async function recordRotationEntry(
  stores: RotationEntryStores,
  name: string,
  rotatedAt: Date,
  entry: StoredRotationEntry,
): Promise<void> {
  const input: ActivityInput = {
    actor: entry.actor,
    action: 'signing-keys.rotated',
    signingKeys: entry.signingKeys,
    comments: entry.comments,
  };
  await stores.activity.appendOnce(rotationEntryId(name, rotatedAt), input, rotatedAt);
  await stores.secrets.setServerSecretMember(name, 'entry.recorded', true);
}
