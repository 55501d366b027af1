import { Schema, Types, type Connection } from 'mongoose';
import { modelFor } from '../db/model-registry.js';

/** Who made a change: an enterprise client, the operator with the admin token, or a user themself. */
export type ActivityActor = { type: 'client'; clientId: string } | { type: 'admin' } | { type: 'user' };

export type ActivityAction =
  | 'user.enrolled'
  | 'user.deleted'
  | 'user.activated'
  | 'user.activation-reissued'
  | 'user.blocked'
  | 'user.unblocked'
  | 'user.sign-in-locked'
  | 'user.sign-in-unlocked'
  | 'client.created'
  | 'client.updated'
  | 'client.secret-rotated'
  | 'client.callback-secret-rotated'
  | 'client.deleted'
  | 'template.created'
  | 'template.updated'
  | 'template.deleted';

/** One change, as written by the service. */
export interface ActivityInput {
  actor: ActivityActor;
  action: ActivityAction;
  /** The enterprise the change belongs to (users, clients); absent for deployment-wide things (templates). */
  enterpriseId?: string;
  userId?: string;
  clientId?: string;
  templateName?: string;
  /** The request's `comments` (maker/checker notes), as given. */
  comments?: string;
}

export interface ActivityEntry extends ActivityInput {
  id: string;
  at: Date;
}

interface ActivityDoc extends ActivityInput {
  _id: Types.ObjectId;
  at: Date;
}

export const activitySchema = new Schema<ActivityDoc>(
  {
    actor: { type: Schema.Types.Mixed, required: true },
    action: { type: String, required: true },
    enterpriseId: { type: String },
    userId: { type: String },
    clientId: { type: String },
    templateName: { type: String },
    comments: { type: String },
    at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'activity' },
);
// Newest first by _id (an ObjectId grows with time within a process and across processes to the second).
activitySchema.index({ enterpriseId: 1, userId: 1, _id: -1 });

export interface ActivityQuery {
  enterpriseId?: string;
  userId?: string;
  /** Only entries older than this entry id (the previous page's `next`). */
  before?: string;
  limit: number;
}

const toEntry = ({ _id, ...rest }: ActivityDoc): ActivityEntry => ({ id: _id.toHexString(), ...rest });

/**
 * The activity record: append-only. This module offers no update or delete, so nothing in the
 * service can rewrite history.
 */
export function createActivityRepository(connection: Connection) {
  const model = () => modelFor(connection, 'Activity', activitySchema);
  return {
    async append(input: ActivityInput, at = new Date()): Promise<ActivityEntry> {
      const doc = {
        _id: new Types.ObjectId(),
        ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
        at,
      } as ActivityDoc;
      await (await model()).collection.insertOne(doc);
      return toEntry(doc);
    },

    /** Newest first; `next` is set when older entries remain. */
    async list(query: ActivityQuery): Promise<{ entries: ActivityEntry[]; next?: string }> {
      const filter: Record<string, unknown> = {};
      if (query.enterpriseId !== undefined) filter.enterpriseId = query.enterpriseId;
      if (query.userId !== undefined) filter.userId = query.userId;
      if (query.before !== undefined) filter._id = { $lt: new Types.ObjectId(query.before) };
      const docs = await (
        await model()
      )
        .find(filter)
        .sort({ _id: -1 })
        .limit(query.limit + 1)
        .lean<ActivityDoc[]>();
      const entries = docs.slice(0, query.limit).map(toEntry);
      const last = entries.at(-1);
      return docs.length > query.limit && last ? { entries, next: last.id } : { entries };
    },
  };
}

export type ActivityRepository = ReturnType<typeof createActivityRepository>;
