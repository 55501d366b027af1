import { randomUUID } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { userFilter, userRefOf } from '../platform/tenancy/tenant-filter.js';
import type { PushSubscriptionRecord } from './push-subscription.types.js';

export const pushSubscriptionSchema = new Schema<PushSubscriptionRecord>(
  {
    subscriptionId: { type: String, required: true, unique: true },
    enterpriseId: { type: String, required: true },
    userId: { type: String, required: true },
    endpoint: { type: String, required: true },
    p256dh: { type: String, required: true },
    authBox: { type: String, required: true },
    expiresAt: { type: Date },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { collection: 'push_subscriptions', versionKey: false },
);
// One record per browser and user: registering the same endpoint again updates it (idempotent).
pushSubscriptionSchema.index({ enterpriseId: 1, userId: 1, endpoint: 1 }, { unique: true });

const model = (connection: Connection) => modelFor(connection, 'PushSubscription', pushSubscriptionSchema);

/** The fields a registration writes; the id and createdAt are set only when the record is new. */
export interface SubscriptionWrite {
  p256dh: string;
  /** Seals the auth secret for the record's id (new or kept). */
  sealAuth: (subscriptionId: string) => string;
  expiresAt?: Date;
}

export function createPushSubscriptionsRepository(connection: Connection) {
  return {
    /**
     * Inserts the subscription or updates the one with the same endpoint (keys may change when
     * the browser renews it). `created` tells which. Concurrent first registrations race on the
     * unique index: the loser updates the winner's record.
     */
    async upsert(
      owner: UserRef,
      endpoint: string,
      write: SubscriptionWrite,
      at: Date,
    ): Promise<{ record: PushSubscriptionRecord; created: boolean }> {
      const Sub = await model(connection);
      // Three rounds settle any interleaving of one concurrent insert and one delete.
      for (let attempt = 0; attempt < 3; attempt++) {
        const existing = await Sub.findOne({ ...userFilter(owner), endpoint }).lean();
        if (existing) {
          const set = { p256dh: write.p256dh, authBox: write.sealAuth(existing.subscriptionId), updatedAt: at };
          const updated = await Sub.findOneAndUpdate(
            { subscriptionId: existing.subscriptionId, ...userFilter(owner) },
            write.expiresAt ? { $set: { ...set, expiresAt: write.expiresAt } } : { $set: set, $unset: { expiresAt: 1 } },
            { new: true },
          ).lean();
          if (updated) return { record: updated, created: false };
          continue; // deleted meanwhile: insert anew
        }
        const subscriptionId = randomUUID();
        const record: PushSubscriptionRecord = {
          subscriptionId,
          ...userRefOf(owner),
          endpoint,
          p256dh: write.p256dh,
          authBox: write.sealAuth(subscriptionId),
          ...(write.expiresAt ? { expiresAt: write.expiresAt } : {}),
          createdAt: at,
          updatedAt: at,
        };
        try {
          await Sub.create(record);
          return { record, created: true };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
      }
      throw new Error('push subscription kept changing while it was registered');
    },

    async list(owner: UserRef): Promise<PushSubscriptionRecord[]> {
      const Sub = await model(connection);
      return Sub.find(userFilter(owner)).sort({ createdAt: 1, subscriptionId: 1 }).lean();
    },

    async count(owner: UserRef): Promise<number> {
      const Sub = await model(connection);
      return Sub.countDocuments(userFilter(owner));
    },

    /** The user's subscription by id; another user's (of any enterprise) is not found. */
    async find(owner: UserRef, subscriptionId: string): Promise<PushSubscriptionRecord | null> {
      const Sub = await model(connection);
      return Sub.findOne({ subscriptionId, ...userFilter(owner) }).lean();
    },

    /** Deletes the user's subscription; false when there was none. */
    async remove(owner: UserRef, subscriptionId: string): Promise<boolean> {
      const Sub = await model(connection);
      return (await Sub.deleteOne({ subscriptionId, ...userFilter(owner) })).deletedCount === 1;
    },

    /**
     * Deletes a subscription the push service reported gone, only while it still names the same
     * endpoint: a record re-registered meanwhile with fresh keys is another subscription.
     */
    async removeGone(subscriptionId: string, endpoint: string, updatedAt: Date): Promise<boolean> {
      const Sub = await model(connection);
      return (await Sub.deleteOne({ subscriptionId, endpoint, updatedAt })).deletedCount === 1;
    },
  };
}

export type PushSubscriptionsRepository = ReturnType<typeof createPushSubscriptionsRepository>;
