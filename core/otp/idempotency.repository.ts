import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { ClientRef } from '../platform/tenancy/enterprise-id.js';
import { clientFilter } from '../platform/tenancy/tenant-filter.js';

interface IdempotencyDoc {
  enterpriseId: string;
  clientId: string;
  key: string;
  requestHash: string;
  otpUuid: string;
  createdAt: Date;
}

export const idempotencySchema = new Schema<IdempotencyDoc>(
  {
    enterpriseId: { type: String, required: true },
    clientId: { type: String, required: true },
    key: { type: String, required: true },
    requestHash: { type: String, required: true },
    otpUuid: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'otp_idempotency_keys' },
);
// A key is the client's own; the enterprise leads the index like every per-tenant record.
idempotencySchema.index({ enterpriseId: 1, clientId: 1, key: 1 }, { unique: true });
idempotencySchema.index({ createdAt: 1 }, { expireAfterSeconds: 24 * 3600 });

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

export function createIdempotencyRepository(connection: Connection) {
  const model = () => modelFor(connection, 'OtpIdempotencyKey', idempotencySchema);
  return {
    /** The claim of this key, if any (read only). */
    async find(client: ClientRef, key: string): Promise<IdempotencyDoc | undefined> {
      return (await (await model()).findOne({ ...clientFilter(client), key }).lean<IdempotencyDoc>()) ?? undefined;
    },

    /**
     * Claims the key for this request, or returns the earlier claim. The unique index decides
     * between concurrent requests; a claim older than the window is replaced (TTL may lag).
     */
    async claim(entry: IdempotencyDoc): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyDoc }> {
      try {
        await (await model()).create(entry);
        return { claimed: true };
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const existing = await (await model()).findOne({ ...clientFilter(entry), key: entry.key }).lean<IdempotencyDoc>();
      if (!existing) return this.claim(entry);
      if (entry.createdAt.getTime() - existing.createdAt.getTime() > IDEMPOTENCY_WINDOW_MS) {
        const replaced = await (
          await model()
        )
          .findOneAndUpdate(
            { ...clientFilter(entry), key: entry.key, createdAt: existing.createdAt },
            { $set: { requestHash: entry.requestHash, otpUuid: entry.otpUuid, createdAt: entry.createdAt } },
          )
          .lean<IdempotencyDoc>();
        if (replaced) return { claimed: true };
        return this.claim(entry);
      }
      return { claimed: false, existing };
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;
