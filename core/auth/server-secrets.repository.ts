import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';

interface ServerSecretDoc {
  name: string;
  value: unknown;
  createdAt: Date;
}

export const serverSecretSchema = new Schema<ServerSecretDoc>(
  {
    name: { type: String, required: true, unique: true },
    value: { type: Schema.Types.Mixed, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'server_secrets', versionKey: false },
);

const model = (connection: Connection) => modelFor(connection, 'ServerSecret', serverSecretSchema);

export function createServerSecretsRepository(connection: Connection) {
  return {
    /**
     * The stored value of secret `name`, created with `generate` when absent. Race-safe without
     * transactions: every process inserts its own candidate and the unique index lets exactly one
     * win; the losers read the winner's value, so concurrent first starts agree on one secret.
     */
    async ensureServerSecret<T>(name: string, generate: () => Promise<T>): Promise<T> {
      const Secret = await model(connection);
      const existing = await Secret.findOne({ name }).lean();
      if (existing) return existing.value as T;
      const candidate = await generate();
      try {
        await Secret.create({ name, value: candidate, createdAt: new Date() });
        return candidate;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const winner = await Secret.findOne({ name }).lean();
        if (!winner) throw err;
        return winner.value as T;
      }
    },

    /**
     * Replaces the value of secret `name` only while it still matches `valueCondition` (conditions
     * on members of the value, such as `{ d: { $exists: true } }`): of several processes doing the
     * same upgrade at once, one writes and the others change nothing.
     */
    async replaceServerSecretWhere(name: string, valueCondition: Record<string, unknown>, value: unknown): Promise<void> {
      const condition = Object.fromEntries(Object.entries(valueCondition).map(([member, test]) => [`value.${member}`, test]));
      await (await model(connection)).updateOne({ name, ...condition }, { $set: { value } });
    },

    /**
     * Stores secret `name` unless it exists: false when another process stored it first (the
     * unique index decides), so of two writers racing for one name exactly one gets true.
     */
    async insertServerSecret(name: string, value: unknown, createdAt: Date = new Date()): Promise<boolean> {
      try {
        await (await model(connection)).create({ name, value, createdAt });
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Sets one member of secret `name`'s value (`member` may be a dotted path); a secret that is gone stays gone. */
    async setServerSecretMember(name: string, member: string, value: unknown): Promise<void> {
      await (await model(connection)).updateOne({ name }, { $set: { [`value.${member}`]: value } });
    },

    /** Deletes the secrets named in `names` (those already gone are no error, so processes may do it at once). */
    async deleteServerSecrets(names: string[]): Promise<void> {
      if (names.length > 0) await (await model(connection)).deleteMany({ name: { $in: names } });
    },

    /** The stored secrets named in `names` or starting with `prefix` (value and when stored), by name, in one query. */
    async findServerSecretsNamedOrPrefixed<T>(names: string[], prefix: string): Promise<Map<string, { value: T; createdAt: Date }>> {
      const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const found = await (await model(connection)).find({ $or: [{ name: { $in: names } }, { name: { $regex: `^${escaped}` } }] }).lean();
      return new Map(found.map((secret) => [secret.name, { value: secret.value as T, createdAt: secret.createdAt }]));
    },

    /** The stored values of the secrets among `names` that exist, by name, in one query. */
    async findServerSecrets<T>(names: string[]): Promise<Map<string, T>> {
      const found = await (await model(connection)).find({ name: { $in: names } }).lean();
      return new Map(found.map((secret) => [secret.name, secret.value as T]));
    },

    /** The stored value of secret `name`, or undefined when it was never created. */
    async findServerSecret<T>(name: string): Promise<T | undefined> {
      const existing = await (await model(connection)).findOne({ name }).lean();
      return existing ? (existing.value as T) : undefined;
    },
  };
}

export type ServerSecretsRepository = ReturnType<typeof createServerSecretsRepository>;
