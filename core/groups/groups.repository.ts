import { Schema, type Connection } from 'mongoose';
import { createOwingCollection } from '../activity/owing-collection.js';
import { indexOwedEntries, notDeleted, owing, owingSchemaFields, type OwedEntry, type OwingFields } from '../activity/owed-entries.js';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import { ConflictError } from '../platform/errors/app-error.js';

/** A user group (primary and secondary groups of enrolled users refer to it by name). */
export interface Group {
  name: string;
  description: string | null;
  createdAt: Date;
}

/**
 * Set by a group deletion while it decides (core/users/group-deletion.service.ts): until `until`,
 * the group takes no new members, and only the deletion holding `token` may remove it.
 */
export interface GroupDeletionMarker {
  token: string;
  until: Date;
}

interface GroupDoc extends Group, OwingFields {
  deletion?: GroupDeletionMarker;
  /** The Idempotency-Key claim of the request that created it: its retry finds it (never shown). */
  creationClaimId?: string;
}

export const groupSchema = new Schema<GroupDoc>(
  {
    name: { type: String, required: true, unique: true },
    description: { type: String, default: null },
    createdAt: { type: Date, required: true },
    deletion: { type: Schema.Types.Mixed },
    creationClaimId: { type: String },
    ...owingSchemaFields,
  },
  { collection: 'groups', versionKey: false },
);
// A deleted group stays, marked, until its entry is written: every read below leaves it out (a
// user may not join it), and creating the name again takes the document over.
indexOwedEntries(groupSchema);

const model = (connection: Connection) => modelFor(connection, 'Group', groupSchema);

/** Groups no deletion is deciding on at `now`: no marker, or one past its deadline (its deletion stopped). */
const withoutLiveMarker = (now: Date) => ({ ...notDeleted, $or: [{ deletion: { $exists: false } }, { 'deletion.until': { $lte: now } }] });
// The markers and owed entries are the deletion's and the record's business; a group is shown without them.
const shown = { _id: 0, deletion: 0, owedActivity: 0, owedActivityLeaseUntil: 0, deletedAt: 0, creationClaimId: 0 };
/** How often a creation tries again when the deleted group holding its name is removed between the insert and the take-over. */
const TAKE_OVER_ATTEMPTS = 3;

export function createGroupsRepository(connection: Connection) {
  return {
    /**
     * Creates a group, with the entry its creation owes; ConflictError (409) when the name exists,
     * decided by the unique index. A deleted group still owing its entry is taken over: its
     * fields replaced, its owed entries kept.
     */
    async createGroup(input: { name: string; description?: string }, owed?: OwedEntry, creationClaimId?: string): Promise<Group> {
      const Groups = await model(connection);
      const group: Group = { name: input.name, description: input.description ?? null, createdAt: owed?.at ?? new Date() };
      const stored = { ...group, ...(creationClaimId ? { creationClaimId } : {}) };
      for (let attempt = 1; attempt <= TAKE_OVER_ATTEMPTS; attempt++) {
        try {
          await Groups.create({ ...stored, ...(owed ? { owedActivity: [owed] } : {}) });
          return group;
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        const taken = await Groups.updateOne(
          { name: input.name, deletedAt: { $exists: true } },
          { $set: stored, $unset: { deletedAt: 1, deletion: 1, ...(creationClaimId ? {} : { creationClaimId: 1 }) }, ...owing(owed) },
        );
        if (taken.matchedCount === 1) return group;
        // Neither: a group has the name, or the deleted one was removed meanwhile (insert again).
        if (await Groups.exists({ name: input.name, ...notDeleted })) break;
      }
      throw new ConflictError(`Group ${input.name} already exists`);
    },

    /** The group of this name if the Idempotency-Key claim `creationClaimId` created it. */
    async findGroupCreatedBy(name: string, creationClaimId: string): Promise<Group | undefined> {
      const Groups = await model(connection);
      return (await Groups.findOne({ name, ...notDeleted, creationClaimId }, shown).lean<Group>()) ?? undefined;
    },

    async findGroup(name: string): Promise<Group | undefined> {
      const Groups = await model(connection);
      return (await Groups.findOne({ name, ...notDeleted }, shown).lean<Group>()) ?? undefined;
    },

    /**
     * Puts a deletion's marker on the group unless another deletion's live marker is there; false
     * when the group is missing or another deletion is deciding on it.
     */
    async markForDeletion(name: string, marker: GroupDeletionMarker, now: Date): Promise<boolean> {
      const Groups = await model(connection);
      return (await Groups.updateOne({ name, ...withoutLiveMarker(now) }, { $set: { deletion: marker } })).matchedCount === 1;
    },

    /** Takes this deletion's marker off the group (the deletion refused); nothing when it is not there. */
    async unmarkForDeletion(name: string, token: string): Promise<void> {
      const Groups = await model(connection);
      await Groups.updateOne({ name, 'deletion.token': token }, { $unset: { deletion: 1 } });
    },

    /**
     * Deletes the group only if it still carries this deletion's marker and the marker is still
     * live at `liveAt`; false otherwise (nothing changed). Deleted means marked, with the entry
     * the deletion owes, in one write: every read treats it as gone at once, and it is removed
     * once the entry is written.
     */
    async removeGroupStillMarked(name: string, token: string, liveAt: Date, owed: OwedEntry): Promise<boolean> {
      const Groups = await model(connection);
      const result = await Groups.updateOne(
        { name, ...notDeleted, 'deletion.token': token, 'deletion.until': { $gt: liveAt } },
        { $set: { deletedAt: owed.at }, $unset: { deletion: 1 }, ...owing(owed) },
      );
      return result.matchedCount === 1;
    },

    async listGroups(): Promise<Group[]> {
      const Groups = await model(connection);
      return Groups.find(notDeleted, shown).sort({ name: 1 }).lean<Group[]>();
    },

    /** Up to `limit` groups by name, after the group named `after` (the last one of the previous page). */
    async listGroupsAfter(after: string | undefined, limit: number): Promise<Group[]> {
      const Groups = await model(connection);
      return Groups.find(after === undefined ? notDeleted : { ...notDeleted, name: { $gt: after } }, shown)
        .sort({ name: 1 })
        .limit(limit)
        .lean<Group[]>();
    },

    /**
     * The names among `names` that are not groups a user may join, in the order given (duplicates
     * once): missing, or being deleted (a live deletion marker), which takes no new members.
     */
    async findMissingGroupNames(names: string[], now = new Date()): Promise<string[]> {
      const unique = [...new Set(names)];
      if (unique.length === 0) return [];
      const Groups = await model(connection);
      const found = await Groups.find({ name: { $in: unique }, ...withoutLiveMarker(now) }, { _id: 0, name: 1 }).lean<{ name: string }[]>();
      const existing = new Set(found.map((g) => g.name));
      return unique.filter((name) => !existing.has(name));
    },

    /** The entries group changes owe the record, by group name. */
    owedActivity: createOwingCollection<string>({
      name: 'groups',
      model: () => model(connection) as never,
      filter: (name) => ({ name }),
      keyFields: ['name'],
      keyOf: (doc) => String(doc.name),
      subject: (name) => ({ groupName: name }),
    }),
  };
}

export type GroupsRepository = ReturnType<typeof createGroupsRepository>;
