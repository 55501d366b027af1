import { Schema, type Connection, type mongo } from 'mongoose';
import { createBatchedLookup, createGroupCommit, settleBulkWrite, STORE_BATCHING } from '../platform/batching/group-commit.js';
import { modelFor, withoutUndefined } from '../platform/db/model-registry.js';
import type { EnterpriseScope } from '../platform/tenancy/enterprise-id.js';
import { scopeFilter } from '../platform/tenancy/tenant-filter.js';
import {
  CANCELLED_BEFORE_SENDING,
  EXPIRED_BEFORE_SENDING,
  receiptFilter,
  replayFilter,
  REQUEST_NOT_ANSWERED,
  takesASendFilter,
  unsentFilter,
} from './delivery-states.js';
import type { Channel, Delivery, DeliveryState } from './delivery.types.js';
import type { SentOutcome } from './sent-journal.js';

interface DeliveryDoc extends Omit<Delivery, 'id'> {
  _id: string;
}

export const deliverySchema = new Schema<DeliveryDoc>(
  {
    _id: { type: String, required: true },
    kind: { type: String, required: true },
    enterpriseId: { type: String },
    refId: { type: String, required: true },
    channel: { type: String, required: true },
    to: { type: String, required: true },
    template: { type: String, required: true },
    test: { type: Boolean },
    failover: { type: Number },
    route: { type: String },
    macros: { type: Schema.Types.Mixed, default: {} },
    secretMacros: { type: String },
    state: { type: String, required: true },
    providerMessageId: { type: String },
    lastError: { type: String },
    provider: { type: String },
    attempts: { type: Number, default: 0 },
    replays: { type: Number },
    notAfter: { type: Date, required: true },
    queuedAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'deliveries', minimize: false },
);
deliverySchema.index({ refId: 1 });
deliverySchema.index({ state: 1, queuedAt: 1 });
deliverySchema.index({ providerMessageId: 1 }, { sparse: true });
// The operators' list of failed deliveries: newest first, `_id` breaking ties (delivery-replay.ts).
deliverySchema.index({ state: 1, updatedAt: -1, _id: -1 });

// The state rules (which rows a write applies to) live in delivery-states.ts; re-exported for callers.
export { CANCELLED_BEFORE_SENDING, EXPIRED_BEFORE_SENDING, REQUEST_NOT_ANSWERED, rowAfterSend } from './delivery-states.js';

export interface DeliveryListQuery {
  state: DeliveryState;
  channel?: Channel;
  provider?: string;
  kind?: Delivery['kind'];
  /** Only rows whose last change is at or after this instant. */
  since?: Date;
  after?: { updatedAt: Date; id: string };
  limit: number;
}

const toDelivery = ({ _id, ...rest }: DeliveryDoc): Delivery => ({ id: _id, ...rest });

export function createDeliveriesRepository(connection: Connection) {
  const model = () => modelFor(connection, 'Delivery', deliverySchema);
  /** The driver's collection, typed with string ids, for the hot paths that skip mongoose. */
  const rows = async () => (await model()).collection as unknown as mongo.Collection<DeliveryDoc>;
  // The rows of concurrent requests go out in one unordered insert (see group-commit.ts).
  const newRows = createGroupCommit<Delivery[], void>(async (groups) => {
    const docs = groups.flat().map(({ id, ...rest }) => withoutUndefined({ _id: id, ...rest }));
    const itemOfDocument = groups.flatMap((group, item) => group.map(() => item));
    return settleBulkWrite(itemOfDocument, groups.length, async () =>
      (await model()).collection.insertMany(docs as never[], { ordered: false }),
    );
  }, STORE_BATCHING);
  // Outcomes recorded by concurrent jobs go out in one unordered bulk write.
  const rowUpdates = createGroupCommit<{ id: string; update: mongo.UpdateFilter<DeliveryDoc> }, void>(async (updates) => {
    const operations = updates.map(({ id, update }) => ({ updateOne: { filter: { _id: id, ...unsentFilter() }, update } }));
    return settleBulkWrite(
      updates.map((_, i) => i),
      updates.length,
      async () => (await rows()).bulkWrite(operations, { ordered: false }),
    );
  }, STORE_BATCHING);
  // Reads of concurrent jobs share one `$in` query on `_id`.
  const lookups = createBatchedLookup(
    async (ids: string[]) => (await rows()).find({ _id: { $in: ids } }).toArray(),
    (doc) => doc._id,
    toDelivery,
  );
  return {
    /** Inserts the rows; rows that already exist (a retried request) are left as they are. */
    async insertMany(deliveries: Delivery[]): Promise<void> {
      if (deliveries.length === 0) return;
      await (
        await model()
      ).bulkWrite(
        deliveries.map(({ id, ...rest }) => ({ updateOne: { filter: { _id: id }, update: { $setOnInsert: rest }, upsert: true } })),
        { ordered: true },
      );
    },

    /** Inserts rows whose ids are new (a fresh OTP): one plain insert, no upserts. */
    async insertNew(deliveries: Delivery[]): Promise<void> {
      if (deliveries.length === 0) return;
      await newRows.submit(deliveries);
    },

    findById(id: string): Promise<Delivery | undefined> {
      return lookups.submit(id);
    },

    /** The rows a provider's receipt names (normally one). */
    async findByProviderMessageId(providerMessageId: string): Promise<Delivery[]> {
      const docs = await (await model()).find({ providerMessageId }).sort({ _id: 1 }).limit(10).lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    /** Oldest first (a resend's rows after the first ones), then by channel. */
    async findByRef(refId: string): Promise<Delivery[]> {
      const docs = await (await model()).find({ refId }).sort({ queuedAt: 1, channel: 1, _id: 1 }).lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    /**
     * Ends the rows of cancelled OTPs of one enterprise that still wait to be sent, in one write
     * however many OTPs a blocked user had. A worker that found an OTP live just before may still
     * hand its row over: its send then overrides this (see TAKES_A_SEND).
     */
    async cancelQueued(scope: EnterpriseScope, otpUuids: readonly string[], now = new Date()): Promise<number> {
      if (otpUuids.length === 0) return 0;
      const result = await (
        await model()
      ).updateMany(
        { ...scopeFilter(scope), refId: { $in: [...otpUuids] }, kind: 'otp', ...unsentFilter() },
        { $set: { state: 'FAILED', lastError: CANCELLED_BEFORE_SENDING, updatedAt: now }, $unset: { secretMacros: 1 } },
      );
      return result.modifiedCount;
    },

    /**
     * The outcomes below apply to rows still QUEUED; `attempts` counts sends tried so far. Sent
     * outcomes come batched from the journal (sent-outcomes.ts): one unordered bulk write.
     */
    async markSentMany(outcomes: SentOutcome[]): Promise<void> {
      if (outcomes.length === 0) return;
      await (
        await rows()
      ).bulkWrite(
        outcomes.map(({ deliveryId, providerMessageId, attempts, sentAt }) => ({
          updateOne: {
            filter: { _id: deliveryId, ...takesASendFilter() },
            update: {
              $set: { state: 'SENT' as const, providerMessageId, attempts, updatedAt: sentAt },
              $unset: { secretMacros: 1 as const, lastError: 1 as const },
            },
          },
        })),
        { ordered: false },
      );
    },

    /**
     * QUEUED → FAILED. With `keepSecrets` the encrypted secret macros stay until the sending window
     * closes (dropEndedSecrets), so an operator can replay the row; without, they go at once.
     */
    async markFailed(
      id: string,
      error: string,
      outcome: { attempts?: number; provider?: string; keepSecrets?: boolean } = {},
      now = new Date(),
    ): Promise<void> {
      const { attempts, provider, keepSecrets } = outcome;
      await rowUpdates.submit({
        id,
        update: {
          $set: {
            state: 'FAILED',
            lastError: error,
            updatedAt: now,
            ...(attempts === undefined ? {} : { attempts }),
            ...(provider === undefined ? {} : { provider }),
          },
          ...(keepSecrets ? {} : { $unset: { secretMacros: 1 as const } }),
        },
      });
    },

    async recordTransientError(id: string, error: string, attempts: number, now = new Date()): Promise<void> {
      await rowUpdates.submit({ id, update: { $set: { lastError: error, attempts, updatedAt: now } } });
    },

    /** A delivery receipt: SENT → DELIVERED or FAILED (a late FAILED never overrides DELIVERED). */
    async applyReceipt(
      providerMessageId: string,
      state: Extract<DeliveryState, 'DELIVERED' | 'FAILED'>,
      error: string | undefined,
      now = new Date(),
      provider?: string,
    ): Promise<number> {
      const failedWith = state === 'FAILED' && provider !== undefined ? { provider } : {};
      const result = await (
        await model()
      ).updateMany(
        { providerMessageId, ...receiptFilter() },
        { $set: { state, updatedAt: now, ...(error ? { lastError: error } : {}), ...failedWith } },
      );
      return result.modifiedCount;
    },

    /** Rows still QUEUED since before `olderThan` and still sendable: candidates for re-enqueue. */
    async findStaleQueued(olderThan: Date, now: Date, limit: number): Promise<Delivery[]> {
      const docs = await (
        await model()
      )
        .find({ ...unsentFilter(), updatedAt: { $lt: olderThan }, notAfter: { $gt: now } })
        .sort({ updatedAt: 1, _id: 1 }) // _id: a tie-break, or equal times come in any order
        .limit(limit)
        .lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    /** Ends rows whose sending window closed while they waited: an expired OTP is never sent. */
    async expireUnsent(now: Date): Promise<number> {
      const result = await (
        await model()
      ).updateMany(
        { ...unsentFilter(), notAfter: { $lte: now } },
        { $set: { state: 'FAILED', lastError: EXPIRED_BEFORE_SENDING, updatedAt: now }, $unset: { secretMacros: 1 } },
      );
      return result.modifiedCount;
    },

    /** Drops the encrypted secrets that FAILED rows kept for a replay once their window closed. */
    async dropEndedSecrets(now: Date): Promise<number> {
      const result = await (
        await model()
      ).updateMany({ state: 'FAILED', notAfter: { $lte: now }, secretMacros: { $exists: true } }, { $unset: { secretMacros: 1 } });
      return result.modifiedCount;
    },

    /** One page of rows in a state, newest change first; `after` is the last row of the previous page. */
    async listByState(query: DeliveryListQuery): Promise<Delivery[]> {
      const filter: Record<string, unknown> = { state: query.state };
      if (query.channel !== undefined) filter.channel = query.channel;
      if (query.provider !== undefined) filter.provider = query.provider;
      if (query.kind !== undefined) filter.kind = query.kind;
      if (query.since !== undefined) filter.updatedAt = { $gte: query.since };
      if (query.after !== undefined) {
        const { updatedAt, id } = query.after;
        filter.$or = [{ updatedAt: { $lt: updatedAt } }, { updatedAt, _id: { $lt: id } }];
      }
      const docs = await (await model()).find(filter).sort({ updatedAt: -1, _id: -1 }).limit(query.limit).lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    async findByIds(ids: string[]): Promise<Delivery[]> {
      if (ids.length === 0) return [];
      const docs = await (await model()).find({ _id: { $in: ids } }).lean<DeliveryDoc[]>();
      return docs.map(toDelivery);
    },

    /**
     * FAILED → QUEUED for an operator's replay, only while the row is as it was read (`failedAt`
     * is its updatedAt then): of two replays of one failure, exactly one wins.
     */
    async reopenFailed(id: string, failedAt: Date, now = new Date()): Promise<boolean> {
      const result = await (
        await model()
      ).updateOne({ _id: id, ...replayFilter(failedAt) }, { $set: { state: 'QUEUED', updatedAt: now }, $inc: { replays: 1 } });
      return result.modifiedCount === 1;
    },

    /**
     * Ends rows of a request that failed while inserting them (their insert may or may not have
     * been applied): nothing must go out for a request answered with an error. Only for ids that
     * are new to that request; best effort (the store is likely down when this is needed).
     */
    async cancelUnanswered(ids: string[], now = new Date()): Promise<void> {
      await (
        await model()
      ).updateMany(
        { _id: { $in: ids }, ...unsentFilter() },
        { $set: { state: 'FAILED', lastError: REQUEST_NOT_ANSWERED, updatedAt: now }, $unset: { secretMacros: 1 } },
      );
    },

    async touch(ids: string[], now = new Date()): Promise<void> {
      await (await model()).updateMany({ _id: { $in: ids }, ...unsentFilter() }, { $set: { updatedAt: now } });
    },
  };
}

export type DeliveriesRepository = ReturnType<typeof createDeliveriesRepository>;
export type { Channel };
