import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { userFilter } from '../platform/tenancy/tenant-filter.js';

/**
 * Consecutive failed login-code checks of one user id, over every code and address, until a
 * right code. At the cap sign-in is locked until an admin unlocks it or the user completes
 * activation again. User ids that do not exist are counted and locked alike, so a lock says
 * nothing about whether the user exists.
 */
interface SignInFailuresDoc extends UserRef {
  failures: number;
  /** When the cap was reached; absent while sign-in is open. */
  lockedAt?: Date;
  /** A count that is not a lock is forgotten this long after its last failure. */
  expiresAt?: Date;
}

const FORGET_AFTER_MS = 90 * 24 * 3600 * 1000;

export const signInFailuresSchema = new Schema<SignInFailuresDoc>(
  {
    enterpriseId: { type: String, required: true },
    userId: { type: String, required: true },
    failures: { type: Number, required: true },
    lockedAt: { type: Date },
    expiresAt: { type: Date },
  },
  { collection: 'sign_in_failures', versionKey: false },
);
signInFailuresSchema.index({ enterpriseId: 1, userId: 1 }, { unique: true });
signInFailuresSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const PROJECTION = { _id: 0 } as const;

export function createSignInFailuresRepository(connection: Connection) {
  const model = () => modelFor(connection, 'SignInFailures', signInFailuresSchema);

  return {
    /** Whether sign-in is locked for this user id (the cap reached). */
    async isLocked(ref: UserRef, maxFailures: number): Promise<boolean> {
      const doc = await (await model()).findOne(userFilter(ref), PROJECTION).lean<SignInFailuresDoc>();
      return doc !== null && (doc.lockedAt !== undefined || doc.failures >= maxFailures);
    },

    /** When the user's sign-in was locked; undefined while it is not. */
    async lockedAt(ref: UserRef): Promise<Date | undefined> {
      const doc = await (await model()).findOne(userFilter(ref), { _id: 0, lockedAt: 1 }).lean<Pick<SignInFailuresDoc, 'lockedAt'>>();
      return doc?.lockedAt ?? undefined;
    },

    /**
     * Counts one check before it is made, atomically, so parallel checks never get past the cap:
     * the check's number among consecutive failures, or undefined when the cap is reached.
     */
    async take(ref: UserRef, maxFailures: number, now: Date): Promise<number | undefined> {
      const Model = await model();
      for (let round = 0; round < 2; round += 1) {
        try {
          const doc = await Model.findOneAndUpdate(
            { ...userFilter(ref), failures: { $lt: maxFailures } },
            { $inc: { failures: 1 }, $set: { expiresAt: new Date(now.getTime() + FORGET_AFTER_MS) } },
            { upsert: true, new: true, projection: PROJECTION },
          ).lean<SignInFailuresDoc>();
          return doc?.failures;
        } catch (err) {
          // The count exists at the cap (the filter missed it, the insert hit the unique index),
          // or two first failures raced: then the second round counts on the existing one.
          if (!isDuplicateKeyError(err)) throw err;
        }
      }
      return undefined;
    },

    /** The counted check did not happen (the code was already used up or expired). */
    async giveBack(ref: UserRef): Promise<void> {
      await (
        await model()
      ).updateOne({ ...userFilter(ref), failures: { $gt: 0 }, lockedAt: { $exists: false } }, { $inc: { failures: -1 } });
    },

    /** The cap is reached: locked for good (no expiry). True for the call that locked it. */
    async lock(ref: UserRef, now: Date): Promise<boolean> {
      const res = await (
        await model()
      ).updateOne({ ...userFilter(ref), lockedAt: { $exists: false } }, { $set: { lockedAt: now }, $unset: { expiresAt: 1 } });
      return res.modifiedCount === 1;
    },

    /** A right code, an admin's unlock or a completed activation: the count starts over. True when it was locked. */
    async clear(ref: UserRef): Promise<boolean> {
      const doc = await (await model()).findOneAndDelete(userFilter(ref), { projection: PROJECTION }).lean<SignInFailuresDoc>();
      return doc?.lockedAt !== undefined && doc?.lockedAt !== null;
    },
  };
}

export type SignInFailuresRepository = ReturnType<typeof createSignInFailuresRepository>;
