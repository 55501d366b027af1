import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import { scopeFilter } from '../platform/tenancy/tenant-filter.js';

/** Who may reuse a key: one caller (a client, or the admin token) of one enterprise, on one route. */
export interface IdempotencyScope {
  enterpriseId: string;
  /** The calling client's id, or `admin` for the admin token. */
  callerId: string;
  /** Method and route template, for example `POST /v1/notifications`. */
  route: string;
}

/** The first answer, kept to be given again. A body holding a secret is kept sealed, and only for a while. */
export interface StoredAnswer {
  status: number;
  location?: string;
  /** JSON text of the body; absent for an empty body or a sealed one. */
  body?: string;
  /** The body sealed with the server's encryption key, bound to the claim id. */
  sealed?: string;
  /** Past this time the sealed body is no longer given out. */
  secretUntil?: Date;
}

export interface IdempotencyRecord extends IdempotencyScope {
  key: string;
  requestHash: string;
  /** Stays the same when a retry takes over a claim its first request left unfinished: ids derived from it stay the same. */
  claimId: string;
  state: 'PENDING' | 'DONE';
  /** When the request now doing the work started it (a retry may take over once this is old). */
  startedAt: Date;
  createdAt: Date;
  expiresAt: Date;
  answer?: StoredAnswer;
}

const answerSchema = new Schema<StoredAnswer>(
  { status: Number, location: String, body: String, sealed: String, secretUntil: Date },
  { _id: false },
);

export const idempotencyRecordSchema = new Schema<IdempotencyRecord>(
  {
    enterpriseId: { type: String, required: true },
    callerId: { type: String, required: true },
    route: { type: String, required: true },
    key: { type: String, required: true },
    requestHash: { type: String, required: true },
    claimId: { type: String, required: true },
    state: { type: String, required: true, enum: ['PENDING', 'DONE'] },
    startedAt: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    answer: { type: answerSchema, required: false },
  },
  { versionKey: false, collection: 'idempotency_records' },
);
// The unique index decides between requests that bring the same key at once; the enterprise leads it.
idempotencyRecordSchema.index({ enterpriseId: 1, callerId: 1, route: 1, key: 1 }, { unique: true });
// Real MongoDB removes expired records; readers check expiresAt themselves (the TTL may lag, and never fires locally).
idempotencyRecordSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const scopeAndKey = (record: IdempotencyScope & { key: string }) => ({
  ...scopeFilter(record),
  callerId: record.callerId,
  route: record.route,
  key: record.key,
});

export function createIdempotencyRecordsRepository(connection: Connection) {
  const model = () => modelFor(connection, 'IdempotencyRecord', idempotencyRecordSchema);
  return {
    /**
     * Claims the key for this request, or returns the record already holding it. An expired
     * record is replaced (conditionally on its claim id, so two requests cannot both replace it).
     */
    async claim(entry: IdempotencyRecord): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord }> {
      for (;;) {
        try {
          await (await model()).create(entry);
          return { claimed: true };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        const existing = await (await model()).findOne(scopeAndKey(entry)).lean<IdempotencyRecord>();
        if (!existing) continue;
        if (existing.expiresAt.getTime() > entry.createdAt.getTime()) return { claimed: false, existing };
        const replaced = await (
          await model()
        )
          .findOneAndReplace({ ...scopeAndKey(entry), claimId: existing.claimId }, entry)
          .lean<IdempotencyRecord>();
        if (replaced) return { claimed: true };
      }
    },

    /** Takes over a PENDING claim whose request is presumed dead; false when another retry took it first. */
    async takeOver(record: IdempotencyRecord, startedAt: Date): Promise<boolean> {
      const result = await (
        await model()
      ).updateOne(
        { ...scopeAndKey(record), claimId: record.claimId, state: 'PENDING', startedAt: record.startedAt },
        { $set: { startedAt } },
      );
      return result.modifiedCount === 1;
    },

    /** Stores the answer of the request holding the claim. */
    async complete(record: IdempotencyRecord, answer: StoredAnswer): Promise<void> {
      await (await model()).updateOne({ ...scopeAndKey(record), claimId: record.claimId }, { $set: { state: 'DONE', answer } });
    },

    /** Gives the key back: the request was refused before it changed anything, so a retry may try again. */
    async release(record: IdempotencyRecord): Promise<void> {
      await (await model()).deleteOne({ ...scopeAndKey(record), claimId: record.claimId, state: 'PENDING' });
    },

    /** Drops a sealed answer whose replay window has passed (the key itself stays until it expires). */
    async forgetSecret(record: IdempotencyRecord): Promise<void> {
      await (await model()).updateOne({ ...scopeAndKey(record), claimId: record.claimId }, { $unset: { 'answer.sealed': 1 } });
    },
  };
}

export type IdempotencyRecordsRepository = ReturnType<typeof createIdempotencyRecordsRepository>;
