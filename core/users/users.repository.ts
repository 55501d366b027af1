import { Schema, type Connection, type Model } from 'mongoose';
import { modelFor } from '../db/model-registry.js';
import type { User } from './user.types.js';

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

export function createUsersRepository(connection: Connection) {
  return {
    async findByUserId(userId: string): Promise<User | undefined> {
      const doc = await (await userModel(connection)).findOne({ userId }).lean<UserDoc>();
      return doc ? toUser(doc) : undefined;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
