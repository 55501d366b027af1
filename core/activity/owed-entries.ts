import { Schema, Types } from 'mongoose';
import type { ActivityAction, ActivityActor } from './activity.repository.js';

/**
 * An activity entry a change owes the record, stored on the changed document in the change's own
 * write and taken off once the record holds it (owing-collection.ts): a failing MongoDB or a
 * process dying between the change and its entry then loses nothing.
 */
export interface OwedEntry {
  /** The entry's activity id (24 hex digits), drawn at the change: it goes in under this id once. */
  id: string;
  action: ActivityAction;
  actor: ActivityActor;
  comments?: string;
  /** The change's time, the entry's `at`. */
  at: Date;
}

/**
 * The entry a change owes, under an id drawn now: an ObjectId, so it holds the change's second,
 * is unique across processes and grows with each change within one (entries of one second keep
 * their order, as entries appended at once do). Stored with the change, the id is the same for
 * every process that later writes the entry.
 */
export function drawOwedEntry(action: ActivityAction, actor: ActivityActor, at: Date, comments?: string): OwedEntry {
  return { id: new Types.ObjectId().toHexString(), action, actor, at, ...(comments !== undefined ? { comments } : {}) };
}

/** What a document owing entries stores besides its own fields (see owing-collection.ts). */
export interface OwingFields {
  owedActivity?: OwedEntry[];
  /** Until when a sweep holds this document's owed entries (no other sweep takes them meanwhile). */
  owedActivityLeaseUntil?: Date;
  /** Set by a deletion: every read treats the document as gone; removed once its entries are written. */
  deletedAt?: Date;
}

/** The schema fields of OwingFields, spread into a collection's schema. */
export const owingSchemaFields = {
  owedActivity: { type: [Schema.Types.Mixed], default: undefined },
  owedActivityLeaseUntil: { type: Date },
  deletedAt: { type: Date },
};

/**
 * Declares the sweep's index on the collection: only documents owing something are in it, so a
 * sweep every SWEEPER_INTERVAL_MS reads a handful of entries instead of the whole collection.
 */
export function indexOwedEntries(schema: Schema): void {
  schema.index({ 'owedActivity.at': 1 }, { sparse: true });
  // Deleted documents the sweep removes once nothing is owed (a settler died before removing one).
  schema.index({ deletedAt: 1 }, { sparse: true });
}

/** The filter of documents no deletion has marked: what every read of the collection sees. */
export const notDeleted = { deletedAt: { $exists: false } } as const;

/** The update fragment storing `owed` with a change (nothing when the change owes nothing). */
export const owing = (owed: OwedEntry | undefined) => (owed ? { $push: { owedActivity: owed } } : {});

/** The fields of a stored document that are the owing machinery's, not the document's own. */
export function withoutOwingFields<T extends object>(doc: T & OwingFields): T {
  const { owedActivity: _owed, owedActivityLeaseUntil: _lease, deletedAt: _deleted, ...rest } = doc;
  return rest as T;
}
