import { Schema, type Connection } from 'mongoose';
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

interface GroupDoc extends Group {
  deletion?: GroupDeletionMarker;
}

export const groupSchema = new Schema<GroupDoc>(
  {
    name: { type: String, required: true, unique: true },
    description: { type: String, default: null },
    createdAt: { type: Date, required: true },
    deletion: { type: Schema.Types.Mixed },
  },
  { collection: 'groups', versionKey: false },
);

const model = (connection: Connection) => modelFor(connection, 'Group', groupSchema);

/** Groups no deletion is deciding on at `now`: no marker, or one past its deadline (its deletion stopped). */
const withoutLiveMarker = (now: Date) => ({ $or: [{ deletion: { $exists: false } }, { 'deletion.until': { $lte: now } }] });
// The marker is the deletion's business; a group is shown without it.
const shown = { _id: 0, deletion: 0 };

export function createGroupsRepository(connection: Connection) {
  return {
    /** Creates a group; ConflictError (409) when the name exists, decided by the unique index. */
    async createGroup(input: { name: string; description?: string }): Promise<Group> {
      const Groups = await model(connection);
      const group: Group = { name: input.name, description: input.description ?? null, createdAt: new Date() };
      try {
        await Groups.create(group);
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new ConflictError(`Group ${input.name} already exists`);
        throw err;
      }
      return group;
    },

    async findGroup(name: string): Promise<Group | undefined> {
      const Groups = await model(connection);
      return (await Groups.findOne({ name }, shown).lean<Group>()) ?? undefined;
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
     * Removes the group only if it still carries this deletion's marker and the marker is still
     * live at `liveAt`; false otherwise (nothing removed).
     */
    async removeGroupStillMarked(name: string, token: string, liveAt: Date): Promise<boolean> {
      const Groups = await model(connection);
      return (await Groups.deleteOne({ name, 'deletion.token': token, 'deletion.until': { $gt: liveAt } })).deletedCount === 1;
    },

    async listGroups(): Promise<Group[]> {
      const Groups = await model(connection);
      return Groups.find({}, shown).sort({ name: 1 }).lean<Group[]>();
    },

    /** Up to `limit` groups by name, after the group named `after` (the last one of the previous page). */
    async listGroupsAfter(after: string | undefined, limit: number): Promise<Group[]> {
      const Groups = await model(connection);
      return Groups.find(after === undefined ? {} : { name: { $gt: after } }, shown)
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
  };
}

export type GroupsRepository = ReturnType<typeof createGroupsRepository>;
