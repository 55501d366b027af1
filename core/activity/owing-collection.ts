import type { Model } from 'mongoose';
import type { Logger } from '../platform/logger/logger.js';
import type { ActivityInput, ActivityRepository } from './activity.repository.js';
import type { OwedEntry } from './owed-entries.js';

/** What names a document in its entries (a template, a client of an enterprise, a group). */
export type EntrySubject = Pick<ActivityInput, 'enterpriseId' | 'clientId' | 'templateName' | 'groupName'>;

/** How a collection plugs in: where its documents are and how a key finds one. */
export interface OwingCollectionSpec<Key> {
  /** How logs name the collection. */
  name: string;
  model: () => Promise<Pick<Model<never>, 'collection'>>;
  /** The key's document, marked deleted or not. */
  filter: (key: Key) => Record<string, unknown>;
  /** The fields a sweep reads a document's key from, and how. */
  keyFields: string[];
  keyOf: (doc: Record<string, unknown>) => Key;
  subject: (key: Key) => EntrySubject;
}

type ActivityWriter = Pick<ActivityRepository, 'appendOnce'>;

/** A document a sweep took: what it owes, and how to write it and give it back. */
export interface ClaimedOwing {
  owed: OwedEntry[];
  settle: (activity: ActivityWriter) => Promise<number>;
  release: () => Promise<void>;
}

/** What the sweep needs of a collection, whatever its key. */
export interface SweptCollection {
  name: string;
  /**
   * Documents owing an entry older than `olderThan` whose lease is free at `now`, each leased to
   * this caller until `leaseUntil` (a conditional update per document: two sweeps never take the same one).
   */
  claimOwing: (olderThan: Date, now: Date, leaseUntil: Date, limit: number) => Promise<ClaimedOwing[]>;
  /** Removes documents deleted before `olderThan` that owe nothing more; resolves to how many. */
  removeSettledDeletions: (olderThan: Date) => Promise<number>;
}

/**
 * The entries a collection's changes owe the record. A change and the entry it owes are one write
 * of the document (its repository's, with `owing(entry)`); the entry itself is a second write, to
 * the record, which a failing MongoDB or a dying process can miss. Whoever comes next settles it:
 * the API right after the change, the next change of the document, and the enrollment worker's
 * sweep. Several may do it at once, or one may die after the entry and before taking it off: each
 * writes under the entry's own id, so the record takes it once. A deletion marks the document
 * (`deletedAt`, with its entry, in one write; every read treats it as gone) and the document is
 * removed by whoever takes its last entry off.
 */
export function createOwingCollection<Key>(spec: OwingCollectionSpec<Key>) {
  const collection = async () => (await spec.model()).collection;
  const marked = { deletedAt: { $exists: true } };

  const owingCollection = {
    name: spec.name,

    /** The entries the document still owes the record (none for an unknown one). */
    async findOwed(key: Key): Promise<OwedEntry[]> {
      const doc = await (
        await collection()
      ).findOne<{ owedActivity?: OwedEntry[] }>(spec.filter(key), { projection: { _id: 0, owedActivity: 1 } });
      return doc?.owedActivity ?? [];
    },

    /**
     * Takes these entries off the document: the record holds them. Others stay (a change made
     * meanwhile). A deleted document owing nothing more is removed.
     */
    async settled(key: Key, ids: string[]): Promise<void> {
      const documents = await collection();
      const filter = spec.filter(key);
      // The usual deletion owes exactly these: removed in one write, so it never stays owing nothing.
      if (ids.length > 0) {
        const gone = await documents.deleteOne({
          ...filter,
          ...marked,
          owedActivity: { $size: ids.length },
          'owedActivity.id': { $all: ids },
        });
        if (gone.deletedCount === 1) return;
        await documents.updateOne(filter, { $pull: { owedActivity: { id: { $in: ids } } } } as never);
        // Gone once empty (unless a change owing another entry came meanwhile): out of the sweep's sparse index.
        await documents.updateOne({ ...filter, owedActivity: { $size: 0 } }, { $unset: { owedActivity: 1 } });
      }
      await documents.deleteOne({ ...filter, ...marked, owedActivity: { $exists: false } });
    },

    /** Writes what the document owes (`owed` as read, or read now), then takes it off. Resolves to how many entries this call added. */
    async settle(activity: ActivityWriter, key: Key, owed?: OwedEntry[]): Promise<number> {
      const entries = owed ?? (await owingCollection.findOwed(key));
      let added = 0;
      for (const { id, action, actor, comments, at } of entries) {
        if (await activity.appendOnce(id, { actor, action, ...spec.subject(key), comments }, at)) added += 1;
      }
      await owingCollection.settled(
        key,
        entries.map((e) => e.id),
      );
      return added;
    },

    /**
     * settle, right after a change whose answer does not wait on the record: a failure is logged
     * and left to the sweep (the change is stored; an error would invite a second change).
     */
    async settleAfterChange(stores: { activity: ActivityWriter; logger: Pick<Logger, 'warn'> }, key: Key): Promise<void> {
      await owingCollection.settle(stores.activity, key).catch((err: unknown) => {
        stores.logger.warn({ err: (err as Error).message, collection: spec.name }, 'activity entry not written; the sweep writes it');
      });
    },

    /**
     * A settler that died between taking a deleted document's last entry off and removing it left
     * the mark owing nothing: every read ignores it, and nothing else would remove it. Only marks
     * older than the sweep's grace, so the settler that is still at it keeps its turn; one write
     * per document, so a creation taking the name over meanwhile keeps its document.
     */
    async removeSettledDeletions(olderThan: Date): Promise<number> {
      const documents = await collection();
      const removed = await documents.deleteMany({ deletedAt: { $lt: olderThan }, 'owedActivity.0': { $exists: false } });
      return removed.deletedCount;
    },

    async claimOwing(olderThan: Date, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedOwing[]> {
      const documents = await collection();
      const free = { $or: [{ owedActivityLeaseUntil: { $exists: false } }, { owedActivityLeaseUntil: { $lte: now } }] };
      const projection = Object.fromEntries([...spec.keyFields, 'owedActivity'].map((field) => [field, 1]));
      const owing = await documents
        .find<Record<string, unknown>>({ 'owedActivity.at': { $lt: olderThan }, ...free }, { projection })
        .limit(limit)
        .toArray();
      const claimed: ClaimedOwing[] = [];
      for (const doc of owing) {
        const key = spec.keyOf(doc);
        const taken = await documents.updateOne({ ...spec.filter(key), ...free }, { $set: { owedActivityLeaseUntil: leaseUntil } });
        if (taken.modifiedCount !== 1) continue;
        const owed = (doc.owedActivity as OwedEntry[] | undefined) ?? [];
        claimed.push({
          owed,
          settle: (activity) => owingCollection.settle(activity, key, owed),
          // Ends this sweep's lease (a document removed meanwhile has none to end).
          release: async () => {
            await documents.updateOne(
              { ...spec.filter(key), owedActivityLeaseUntil: leaseUntil },
              { $unset: { owedActivityLeaseUntil: 1 } },
            );
          },
        });
      }
      return claimed;
    },
  };
  return owingCollection;
}

export type OwingCollection<Key> = ReturnType<typeof createOwingCollection<Key>>;
