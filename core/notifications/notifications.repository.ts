import { randomUUID } from 'node:crypto';
import { Schema, type Connection, type Model, type mongo } from 'mongoose';
import { modelFor, withoutUndefined } from '../platform/db/model-registry.js';
import type { UserRef } from '../platform/tenancy/enterprise-id.js';
import { userFilter } from '../platform/tenancy/tenant-filter.js';
import { holderFilter, type NotificationHolder } from './notification-holder.js';
import { countedWrongNumberFilter, lastWrongNumberFilter, transitionFilter } from './notification-states.js';
import type { FinalStatus, Notification, NotificationStatus, SigningStatus } from './notification.types.js';
import { notificationExpiryLag, notificationsEnded } from '../platform/metrics/business-metrics.js';

/**
 * The stored document: the record, its uuid as _id, the mark of an event still owed and, while a
 * notification worker appends that event, the claim of its sweep.
 */
type NotificationDoc = Notification & { _id: string; userEventDueAt?: Date; userEventClaim?: string };

export const notificationSchema = new Schema<NotificationDoc>(
  {
    // The uuid is the _id too: every conditional write names it, and servers answer a filter
    // that names one _id through the _id index whatever the other conditions (the local
    // MongoDB-wire server only then; with a secondary unique index it scanned the collection).
    _id: { type: String, required: true },
    notificationUuid: { type: String, required: true },
    enterpriseId: { type: String, required: true },
    clientId: { type: String, required: true },
    userId: { type: String, required: true },
    body: { type: Schema.Types.Mixed, required: true },
    actions: { type: Schema.Types.Mixed, required: true },
    dsRequired: { type: Boolean, required: true },
    number: { type: String },
    numberAttempts: { type: Number, required: true },
    callbackUrl: { type: String },
    callbackState: { type: String },
    status: { type: String, required: true },
    action: { type: String },
    signingStatus: { type: String, required: true },
    isDsVerified: { type: Boolean, required: true },
    deviceId: { type: String },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    answeredAt: { type: Date },
    // Set with each change that owes the user's streams an event, cleared once it is appended
    // (user-event-outbox.ts); never part of the record the code reads.
    userEventDueAt: { type: Date },
    // The sweep that holds the mark (its due time then being the end of that sweep's lease).
    userEventClaim: { type: String },
  },
  { versionKey: false, collection: 'notifications' },
);
// The user's lists (active and history): equality on enterprise, user and status, newest first.
notificationSchema.index({ enterpriseId: 1, userId: 1, status: 1, createdAt: -1 });
// The expiry sweep: ACTIVE records whose expiresAt has passed, oldest first.
notificationSchema.index({ status: 1, expiresAt: 1 });
// Retention: ended records older than the retention window (answeredAt is set only when ended).
notificationSchema.index({ answeredAt: 1 }, { sparse: true });
// Callbacks still to deliver (only records with a callbackUrl have the field): the sweep reads
// every WAITING one by this equality alone, a set bounded by pending notifications with callbacks.
notificationSchema.index({ callbackState: 1 }, { sparse: true });
// Events the API wrote the change of but never appended (only marked records have the field).
notificationSchema.index({ userEventDueAt: 1 }, { sparse: true });
// A TTL index does the same on a real MongoDB; the worker's purge covers servers where TTL never fires.
// (Not declared here: its lifetime is a setting, and the purge is the one mechanism we test.)

export function notificationModel(connection: Connection): Promise<Model<NotificationDoc>> {
  return modelFor(connection, 'Notification', notificationSchema);
}

/** The stored document: the record with its uuid as _id. */
export const toNotificationDoc = (n: Notification): Notification & { _id: string } => withoutUndefined({ _id: n.notificationUuid, ...n });

const PROJECTION = { _id: 0, userEventDueAt: 0, userEventClaim: 0 } as const;

/** What ending a notification writes besides its status. */
export interface FinalFields {
  action?: string;
  signingStatus?: SigningStatus;
  isDsVerified?: boolean;
  deviceId?: string;
}

export interface ListQuery extends UserRef {
  statuses: NotificationStatus[];
  /** Only records with expiresAt after this (the active list hides what has expired by the clock). */
  expiresAfter?: Date;
  createdFrom?: Date;
  createdTo?: Date;
  action?: string;
  deviceId?: string;
  /** Matched anywhere in any subject or message, case-insensitively. */
  keyword?: string;
  skip: number;
  /** 0 means all. */
  limit: number;
}

/**
 * Records a list asks the store for at a time. A record is at most about 64 kB (a body at its
 * size limit), so one request holds at most about 2 MB of them, whatever the list's length.
 */
export const LIST_BATCH_SIZE = 32;

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every final state is counted where it is written, whichever path wrote it. */
function countEnded(status: FinalStatus, count: number): void {
  if (count > 0) notificationsEnded.inc({ status }, count);
}

export interface NotificationsRepositoryHooks {
  /**
   * Told after a write ended these notifications (not expiry: readers see that by the clock), so
   * that waiting requests hear of it at once. Given uuids may include some the write did not end.
   */
  onEnded?: (notificationUuids: string[]) => void;
  /** Told with the record when one notification was ended (answers, cancel, dismiss, discard). */
  onEndedRecord?: (ended: Notification) => void;
}

/** A record whose user event is still owed, with the mark to clear once it is appended. */
export type UserEventDue = Notification & { userEventDueAt: Date };

export function createNotificationsRepository(connection: Connection, hooks: NotificationsRepositoryHooks = {}) {
  const model = () => notificationModel(connection);
  return {
    /** Stores a new record, its `created` event marked due until it is appended. */
    async insert(n: Notification): Promise<void> {
      await (await model()).collection.insertOne({ ...toNotificationDoc(n), userEventDueAt: n.createdAt } as never);
    },

    /**
     * Clears the marks of events now appended (one unordered write), each unless a later change
     * marked its own since: the mark then stands for that change's event.
     */
    async clearUserEventsDue(marks: { notificationUuid: string; dueAt: Date }[]): Promise<void> {
      if (marks.length === 0) return;
      const collection = (await model()).collection as unknown as mongo.Collection<NotificationDoc>;
      await collection.bulkWrite(
        marks.map(({ notificationUuid, dueAt }) => ({
          updateOne: {
            filter: { _id: notificationUuid, userEventDueAt: dueAt },
            update: { $unset: { userEventDueAt: 1 as const, userEventClaim: 1 as const } },
          },
        })),
        { ordered: false },
      );
    },

    /**
     * Takes up to `limit` records whose event has been due since `before` or earlier, oldest
     * first, for one sweep: their marks move to `leaseUntil` (so no other sweep takes them before
     * then, and one that fails comes back after the lease), and only the records this very write
     * moved are returned, with their new mark. Two workers sweeping at once thus share the marks
     * instead of both appending every event.
     */
    async claimUserEventsDue(before: Date, leaseUntil: Date, limit: number): Promise<UserEventDue[]> {
      const m = await model();
      const due = await m
        .find({ userEventDueAt: { $lte: before } }, { _id: 1 })
        .sort({ userEventDueAt: 1 })
        .limit(limit)
        .lean<{ _id: string }[]>();
      if (due.length === 0) return [];
      const ids = due.map((d) => d._id);
      const claim = randomUUID();
      const collection = m.collection as unknown as mongo.Collection<NotificationDoc>;
      // Still due before the cutoff: a mark another sweep leased, or a later change re-marked, is left alone.
      await collection.updateMany(
        { _id: { $in: ids }, userEventDueAt: { $lte: before } },
        { $set: { userEventDueAt: leaseUntil, userEventClaim: claim } },
      );
      return m
        .find({ _id: { $in: ids }, userEventClaim: claim }, { _id: 0, userEventClaim: 0 })
        .sort({ createdAt: 1 })
        .lean<UserEventDue[]>();
    },

    async find(notificationUuid: string): Promise<Notification | null> {
      return (await model()).findOne({ _id: notificationUuid }, PROJECTION).lean<Notification>();
    },

    /**
     * Ends the notification in `to` when the state rules allow it at `now` (one conditional
     * update); the updated record, or null when another final state or the clock won.
     */
    async end(
      notificationUuid: string,
      holder: NotificationHolder,
      to: FinalStatus,
      now: Date,
      fields: FinalFields = {},
    ): Promise<Notification | null> {
      const ended = await (
        await model()
      )
        .findOneAndUpdate(
          { _id: notificationUuid, ...holderFilter(holder), ...transitionFilter(to, now) },
          { $set: withoutUndefined({ status: to, answeredAt: now, userEventDueAt: now, ...fields }) },
          { new: true, projection: PROJECTION },
        )
        .lean<Notification>();
      if (ended) {
        countEnded(to, 1);
        hooks.onEnded?.([notificationUuid]);
        hooks.onEndedRecord?.(ended);
      }
      return ended;
    },

    /** Counts a wrong matching number while attempts remain; null when that was not possible. */
    async countWrongNumber(notificationUuid: string, user: UserRef, now: Date): Promise<Notification | null> {
      return (await model())
        .findOneAndUpdate(
          { _id: notificationUuid, ...userFilter(user), ...countedWrongNumberFilter(now) },
          { $inc: { numberAttempts: 1 } },
          { new: true, projection: PROJECTION },
        )
        .lean<Notification>();
    },

    /**
     * The last wrong number: TAMPERED, naming the device that sent it (as a bad signature's end
     * does). Null when it was not the last one any more (a race).
     */
    async endOnLastWrongNumber(notificationUuid: string, user: UserRef, now: Date, deviceId?: string): Promise<Notification | null> {
      const ended = await (
        await model()
      )
        .findOneAndUpdate(
          { _id: notificationUuid, ...userFilter(user), ...lastWrongNumberFilter(now) },
          {
            $set: {
              status: 'TAMPERED',
              signingStatus: 'NA',
              isDsVerified: false,
              answeredAt: now,
              userEventDueAt: now,
              ...(deviceId !== undefined ? { deviceId } : {}),
            },
            $inc: { numberAttempts: 1 },
          },
          { new: true, projection: PROJECTION },
        )
        .lean<Notification>();
      if (ended) {
        countEnded('TAMPERED', 1);
        hooks.onEnded?.([notificationUuid]);
        hooks.onEndedRecord?.(ended);
      }
      return ended;
    },

    /**
     * The user's records as the store yields them, at most {@link LIST_BATCH_SIZE} at a time:
     * the caller writes each before the next batch is asked for, and stopping early (a `break`,
     * or `return()` on the iterator) closes the cursor on the server.
     */
    async list(query: ListQuery): Promise<AsyncIterable<Notification>> {
      const filter: Record<string, unknown> = {
        ...userFilter(query),
        status: query.statuses.length === 1 ? query.statuses[0] : { $in: query.statuses },
      };
      if (query.expiresAfter) filter.expiresAt = { $gt: query.expiresAfter };
      if (query.createdFrom || query.createdTo) {
        filter.createdAt = {
          ...(query.createdFrom ? { $gte: query.createdFrom } : {}),
          ...(query.createdTo ? { $lte: query.createdTo } : {}),
        };
      }
      if (query.action !== undefined) filter.action = query.action;
      if (query.deviceId !== undefined) filter.deviceId = query.deviceId;
      if (query.keyword !== undefined) {
        const regex = { $regex: escapeRegex(query.keyword), $options: 'i' };
        filter.$or = [{ 'body.subject': regex }, { 'body.message': regex }];
      }
      const collection = (await model()).collection as unknown as mongo.Collection<NotificationDoc>;
      return collection.find(filter as mongo.Filter<NotificationDoc>, {
        projection: PROJECTION,
        sort: { createdAt: -1, _id: -1 },
        skip: query.skip,
        ...(query.limit > 0 ? { limit: query.limit } : {}),
        batchSize: query.limit > 0 ? Math.min(query.limit, LIST_BATCH_SIZE) : LIST_BATCH_SIZE,
      }) as unknown as AsyncIterable<Notification>;
    },

    /** The user's ACTIVE, still-in-time notifications (to discard them). */
    async findPendingOfUser(ref: UserRef, now: Date): Promise<Pick<Notification, 'notificationUuid' | 'callbackUrl'>[]> {
      return (await model())
        .find({ ...userFilter(ref), ...transitionFilter('DISCARD', now) }, { _id: 0, notificationUuid: 1, callbackUrl: 1 })
        .lean<Pick<Notification, 'notificationUuid' | 'callbackUrl'>[]>();
    },

    /**
     * EXPIRED for those of these notifications that are due (one update), then their states
     * (one read): the batched path of the expiry jobs.
     */
    async expireMany(
      notificationUuids: string[],
      now: Date,
    ): Promise<Pick<Notification, 'notificationUuid' | 'status' | 'expiresAt' | 'callbackUrl'>[]> {
      const Notifications = await model();
      const result = await Notifications.collection.updateMany(
        { _id: { $in: notificationUuids }, ...transitionFilter('EXPIRED', now) } as never,
        { $set: { status: 'EXPIRED', answeredAt: now } },
      );
      countEnded('EXPIRED', result.modifiedCount);
      const rows = await Notifications.collection
        .find<Pick<Notification, 'notificationUuid' | 'status' | 'expiresAt' | 'callbackUrl' | 'answeredAt'>>(
          { _id: { $in: notificationUuids } } as never,
          { projection: { _id: 0, notificationUuid: 1, status: 1, expiresAt: 1, callbackUrl: 1, answeredAt: 1 } },
        )
        .toArray();
      // The lag of those this update expired (answeredAt is this call's instant).
      for (const row of rows)
        if (row.status === 'EXPIRED' && row.answeredAt?.getTime() === now.getTime())
          notificationExpiryLag.observe(Math.max(now.getTime() - row.expiresAt.getTime(), 0) / 1000);
      return rows;
    },

    /** Ends these notifications in `to` where the rules still allow it; how many changed. */
    async endMany(notificationUuids: string[], to: FinalStatus, now: Date): Promise<number> {
      if (notificationUuids.length === 0) return 0;
      const result = await (
        await model()
      ).updateMany({ _id: { $in: notificationUuids }, ...transitionFilter(to, now) }, { $set: { status: to, answeredAt: now } });
      countEnded(to, result.modifiedCount);
      if (result.modifiedCount > 0) hooks.onEnded?.(notificationUuids);
      return result.modifiedCount;
    },

    /**
     * Expires in one update every ACTIVE record past its expiresAt that has no callback to send
     * (nothing else to do for them: the bulk path of the sweep).
     */
    async expireDueWithoutCallback(now: Date): Promise<number> {
      const result = await (
        await model()
      ).updateMany({ ...transitionFilter('EXPIRED', now), callbackUrl: null }, { $set: { status: 'EXPIRED', answeredAt: now } });
      countEnded('EXPIRED', result.modifiedCount);
      return result.modifiedCount;
    },

    /** Notifications whose callback is still WAITING (pending ones with a callback included). */
    async findWaitingCallbacks(): Promise<Pick<Notification, 'notificationUuid' | 'status' | 'expiresAt' | 'answeredAt'>[]> {
      return (await model())
        .find({ callbackState: 'WAITING' }, { _id: 0, notificationUuid: 1, status: 1, expiresAt: 1, answeredAt: 1 })
        .lean<Pick<Notification, 'notificationUuid' | 'status' | 'expiresAt' | 'answeredAt'>[]>();
    },

    async setCallbackState(notificationUuid: string, state: 'SENT' | 'FAILED'): Promise<void> {
      await (await model()).updateOne({ _id: notificationUuid, callbackState: 'WAITING' }, { $set: { callbackState: state } });
    },

    /** Deletes ended notifications whose final state is older than `before`; how many went. */
    async purgeEndedBefore(before: Date): Promise<number> {
      const result = await (await model()).deleteMany({ answeredAt: { $lt: before } });
      return result.deletedCount;
    },
  };
}

export type NotificationsRepository = ReturnType<typeof createNotificationsRepository>;
