import { Schema, Types, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { EnterpriseScope } from '../platform/tenancy/enterprise-id.js';
import { scopeFilter } from '../platform/tenancy/tenant-filter.js';

/** Who made a change (or replayed deliveries): an enterprise client, the operator with the admin token, or a user themself. */
/** Who made a change; `service` is the service itself (a scheduled rotation of the signing keys). */
export type ActivityActor = { type: 'client'; clientId: string } | { type: 'admin' } | { type: 'user' } | { type: 'service' };

export type ActivityAction =
  | 'user.enrolled'
  | 'user.updated'
  | 'user.deleted'
  | 'user.activated'
  | 'user.activation-reissued'
  | 'user.blocked'
  | 'user.unblocked'
  | 'user.sign-in-locked'
  | 'user.sign-in-unlocked'
  | 'user.passkey-added'
  | 'user.passkey-removed'
  | 'client.created'
  | 'client.updated'
  | 'client.secret-rotated'
  | 'client.callback-secret-rotated'
  | 'client.deleted'
  | 'template.created'
  | 'template.updated'
  | 'template.deleted'
  | 'group.created'
  | 'group.deleted'
  | 'deliveries.replayed'
  | 'signing-keys.rotated';

/** One change, as written by the service. */
export interface ActivityInput {
  actor: ActivityActor;
  action: ActivityAction;
  /** The enterprise the change belongs to (users, clients); absent for deployment-wide things (templates). */
  enterpriseId?: string;
  userId?: string;
  clientId?: string;
  templateName?: string;
  /** A group created or deleted (groups, like templates, serve every enterprise). */
  groupName?: string;
  /** A replay of failed deliveries: how many were selected, queued again and skipped. */
  replay?: { selected: number; queued: number; skipped: number };
  /** The deliveries a replay queued again. */
  deliveryIds?: string[];
  /** A rotation of the token signing keys: each new key and the key it replaces. */
  signingKeys?: { alg: string; kid: string; previousKid: string }[];
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
    groupName: { type: String },
    replay: { type: Schema.Types.Mixed },
    deliveryIds: { type: [String], default: undefined },
    signingKeys: { type: Schema.Types.Mixed },
    comments: { type: String },
    at: { type: Date, required: true },
  },
  { versionKey: false, collection: 'activity' },
);
// Newest first by time, then by _id. The time orders entries of different processes (API, workers,
// the admin CLI); an ObjectId alone would not within one second, its next bytes being random per
// process. The id breaks ties of one millisecond (within a process it grows with each entry).
activitySchema.index({ enterpriseId: 1, userId: 1, at: -1, _id: -1 });

export interface ActivityQuery {
  /** Absent: the admin report spans every enterprise (admins see all tenants). */
  scope?: EnterpriseScope;
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

    /**
     * Appends the entry under `id` (24 hex digits) unless an entry has that id: false when one
     * had. For a change that more than one process may record (one that crashed after the change
     * and those catching up for it): derived from the change, the id lets exactly one entry in.
     */
    async appendOnce(id: string, input: ActivityInput, at: Date): Promise<boolean> {
      const doc = {
        _id: new Types.ObjectId(id),
        ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
        at,
      } as ActivityDoc;
      try {
        await (await model()).collection.insertOne(doc);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    /** Newest first; `next` is set when older entries remain. */
    async list(query: ActivityQuery): Promise<{ entries: ActivityEntry[]; next?: string }> {
      const filter: Record<string, unknown> = query.scope !== undefined ? scopeFilter(query.scope) : {};
      if (query.userId !== undefined) filter.userId = query.userId;
      const collection = await model();
      if (query.before !== undefined) {
        const _id = new Types.ObjectId(query.before);
        const cursor = await collection.findOne({ ...filter, _id }, { at: 1 }).lean<Pick<ActivityDoc, 'at'>>();
        // An id that names no entry of this selection starts nowhere: an empty page.
        if (!cursor) return { entries: [] };
        filter.$or = [{ at: { $lt: cursor.at } }, { at: cursor.at, _id: { $lt: _id } }];
      }
      const docs = await collection
        .find(filter)
        .sort({ at: -1, _id: -1 })
        .limit(query.limit + 1)
        .lean<ActivityDoc[]>();
      const entries = docs.slice(0, query.limit).map(toEntry);
      const last = entries.at(-1);
      return docs.length > query.limit && last ? { entries, next: last.id } : { entries };
    },
  };
}

export type ActivityRepository = ReturnType<typeof createActivityRepository>;
