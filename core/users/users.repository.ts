import { Schema, type Connection, type Model } from 'mongoose';
import { createBatchedLookup } from '../batching/group-commit.js';
import { modelFor } from '../db/model-registry.js';
import { MAX_ACTIVATION_ATTEMPTS, PENDING_STATUSES, type User, type UserActivation, type UserDevice } from './user.types.js';

interface UserDoc extends User {
  /**
   * The mobile number while the user is not DELETED, absent otherwise. A sparse unique index on
   * it keeps a number to one live user (partial indexes are not honoured by the local server).
   */
  liveMobileNumber?: string;
}

const userSchema = new Schema<UserDoc>(
  {
    userId: { type: String, required: true },
    loginId: { type: String, required: true },
    primaryGroup: { type: String, required: true },
    secondaryGroups: { type: [String], default: [] },
    firstName: { type: String, required: true },
    lastName: { type: String, required: true },
    emailId: { type: String },
    mobileNumber: { type: String },
    liveMobileNumber: { type: String },
    status: { type: String, required: true },
    sourceType: { type: String, required: true },
    comments: { type: String },
    clientId: { type: String, required: true },
    activation: { type: Schema.Types.Mixed },
    device: { type: Schema.Types.Mixed },
    server_bio_template_hash: { type: String },
    server_bio_template_hash_created_ts: { type: Date },
    server_bio_template_source: { type: String },
    activatedAt: { type: Date },
    blocked: { type: Schema.Types.Mixed },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, collection: 'users' },
);
userSchema.index({ userId: 1 }, { unique: true });
userSchema.index({ liveMobileNumber: 1 }, { unique: true, sparse: true });

/** The users model once its unique indexes exist (they carry the enrollment race-safety). */
export function userModel(connection: Connection): Promise<Model<UserDoc>> {
  return modelFor(connection, 'User', userSchema);
}

function toUser(doc: UserDoc & { _id?: unknown }): User {
  const { _id, liveMobileNumber, ...user } = doc;
  void _id;
  void liveMobileNumber;
  return user;
}

const pending = { $in: [...PENDING_STATUSES] };

export function createUsersRepository(connection: Connection) {
  const model = () => userModel(connection);
  // Look-ups of concurrent requests share one `$in` query on the unique userId index.
  const lookups = createBatchedLookup(
    async (userIds: string[]) => (await model()).collection.find<UserDoc>({ userId: { $in: userIds } }).toArray(),
    (doc) => doc.userId,
    toUser,
  );
  return {
    findByUserId(userId: string): Promise<User | undefined> {
      return lookups.submit(userId);
    },

    /** The user who is not DELETED and holds this mobile number, if any. */
    async findLiveByMobile(mobileNumber: string): Promise<User | undefined> {
      const doc = await (await model()).findOne({ liveMobileNumber: mobileNumber }).lean<UserDoc>();
      return doc ? toUser(doc) : undefined;
    },

    /** Inserts the user; a duplicate userId or live mobile number throws MongoDB's error 11000. */
    async insert(user: User): Promise<void> {
      await (await model()).create({ ...user, ...(user.status !== 'DELETED' && user.mobileNumber ? { liveMobileNumber: user.mobileNumber } : {}) });
    },

    /**
     * Counts one activation check atomically while the user is pending and not locked, so N
     * parallel guesses never get more than MAX_ACTIVATION_ATTEMPTS checks. Returns the
     * activation as counted, or undefined when no check is allowed.
     */
    async reserveActivationAttempt(userId: string, now: Date): Promise<UserActivation | undefined> {
      const doc = await (await model())
        .findOneAndUpdate(
          { userId, status: pending, 'activation.failedAttempts': { $lt: MAX_ACTIVATION_ATTEMPTS } },
          { $inc: { 'activation.failedAttempts': 1 }, $set: { updatedAt: now } },
          { new: true },
        )
        .lean<UserDoc>();
      return doc?.activation;
    },

    /** ACTIVE once, for this code issue only; false when the user changed meanwhile. */
    async completeActivation(userId: string, issue: number, device: UserDevice | undefined, now: Date): Promise<boolean> {
      const result = await (await model()).updateOne(
        { userId, status: pending, 'activation.issue': issue, 'activation.expiresAt': { $gt: now } },
        { $set: { status: 'ACTIVE', activatedAt: now, updatedAt: now, ...(device ? { device } : {}) }, $unset: { activation: 1 } },
      );
      return result.modifiedCount === 1;
    },

    /** Replaces the activation of a pending user whose current issue is `previousIssue`. */
    async replaceActivation(userId: string, previousIssue: number, activation: UserActivation, now: Date): Promise<boolean> {
      const result = await (await model()).updateOne(
        { userId, status: pending, 'activation.issue': previousIssue },
        { $set: { activation, updatedAt: now } },
      );
      return result.modifiedCount === 1;
    },

    /**
     * Pending activations whose messages were never prepared (the enrollment job was lost):
     * the encrypted code is still on the user long after it was issued.
     */
    async findUnpreparedActivations(olderThan: Date, limit: number): Promise<{ userId: string; issue: number }[]> {
      const docs = await (await model())
        .find({ status: pending, 'activation.codeEncrypted': { $exists: true }, updatedAt: { $lt: olderThan } }, { userId: 1, 'activation.issue': 1 })
        .sort({ updatedAt: 1 })
        .limit(limit)
        .lean<{ userId: string; activation: { issue: number } }[]>();
      return docs.map((d) => ({ userId: d.userId, issue: d.activation.issue }));
    },

    /** Drops the encrypted code once the activation deliveries hold their own copy. */
    async clearActivationCode(userId: string, issue: number): Promise<void> {
      await (await model()).updateOne({ userId, 'activation.issue': issue }, { $unset: { 'activation.codeEncrypted': 1 } });
    },

    /** Blocks (with an optional reason) or unblocks the user; false when the user is unknown. */
    async setBlocked(userId: string, blocked: boolean, reason: string | undefined, now: Date): Promise<boolean> {
      const update = blocked ? { $set: { blocked: { at: now, ...(reason !== undefined ? { reason } : {}) }, updatedAt: now } } : { $unset: { blocked: 1 }, $set: { updatedAt: now } };
      const result = await (await model()).updateOne({ userId }, update);
      return result.matchedCount === 1;
    },

    /** DELETED: frees the mobile number and ends any pending activation. False when unknown. */
    async markDeleted(userId: string, now: Date): Promise<boolean> {
      const Users = await model();
      const result = await Users.updateOne(
        { userId, status: { $ne: 'DELETED' } },
        { $set: { status: 'DELETED', updatedAt: now }, $unset: { liveMobileNumber: 1, activation: 1 } },
      );
      if (result.matchedCount === 1) return true;
      // Deleting twice is not an error: the user exists, already DELETED.
      return (await Users.exists({ userId })) !== null;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
