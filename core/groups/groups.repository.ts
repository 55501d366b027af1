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

export const groupSchema = new Schema<Group>(
  {
    name: { type: String, required: true, unique: true },
    description: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { collection: 'groups', versionKey: false },
);

const model = (connection: Connection) => modelFor(connection, 'Group', groupSchema);

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
      return (await Groups.findOne({ name }, { _id: 0 }).lean<Group>()) ?? undefined;
    },

    /** Removes the group; false when there was none. */
    async removeGroup(name: string): Promise<boolean> {
      const Groups = await model(connection);
      return (await Groups.deleteOne({ name })).deletedCount === 1;
    },

    async listGroups(): Promise<Group[]> {
      const Groups = await model(connection);
      return Groups.find({}, { _id: 0 }).sort({ name: 1 }).lean<Group[]>();
    },

    /** The names among `names` that are not groups, in the order given (duplicates once). */
    async findMissingGroupNames(names: string[]): Promise<string[]> {
      const unique = [...new Set(names)];
      if (unique.length === 0) return [];
      const Groups = await model(connection);
      const found = await Groups.find({ name: { $in: unique } }, { _id: 0, name: 1 }).lean<{ name: string }[]>();
      const existing = new Set(found.map((g) => g.name));
      return unique.filter((name) => !existing.has(name));
    },
  };
}

export type GroupsRepository = ReturnType<typeof createGroupsRepository>;
