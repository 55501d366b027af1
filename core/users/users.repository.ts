import { Schema, type Connection, type Model } from 'mongoose';
import type { ActivityActor, ActivityAction } from '../activity/activity.repository.js';
import { createBatchedLookup } from '../platform/batching/group-commit.js';
import { modelFor } from '../platform/db/model-registry.js';
import { mobileNumberKey } from './mobile-number-key.js';
import { userKey, userRefFromKey, type EnterpriseScope, type UserRef } from '../platform/tenancy/enterprise-id.js';
import { anyOfUsersFilter, outsideEnterprisesFilter, scopeFilter, userFilter, userRefOf } from '../platform/tenancy/tenant-filter.js';
import { PENDING_STATUSES, type User, type UserActivation, type UserDevice, type UserStatus } from './user.types.js';

/** Where a page of the user list starts: after this user in (createdAt, userId) order. */
export interface UserListPosition {
  createdAt: Date;
  userId: string;
}

export interface UserListQuery {
  enterpriseId: string;
  status?: UserStatus;
  /** Users whose primary or one of whose secondary groups this is. */
  group?: string;
  after?: UserListPosition;
  limit: number;
}

/** The fields a PATCH may change; `null` removes an optional contact. */
export interface UserChanges {
  firstName?: string;
  lastName?: string;
  emailId?: string | null;
  mobileNumber?: string | null;
  primaryGroup?: string;
  secondaryGroups?: string[];
}

/**
 * A group a PATCH's undo may write back, held for the deletion's count from the PATCH's write until
 * its re-read of the groups (or its undo) takes it off: the protocol in group-deletion.service.ts.
 * Only an entry still live (`until` ahead) counts, so one left by a process that died lapses.
 */
/**
 * Whose users a group deletion counts: one enterprise's (its own group), or every enterprise's
 * but those with their own group of the name (a shared group).
 */
export type GroupMembers = EnterpriseScope | { exceptEnterprises: string[] };

export interface GroupLeaving {
  group: string;
  /** The PATCH that wrote it, so that it takes off only its own entries. */
  patch: string;
  until: Date;
}

/** What a PATCH's conditional update also does about its group entries (see GroupLeaving) and its activity entry. */
export interface GroupsLeavingUpdate {
  /** Entries to add with the changes. */
  add?: GroupLeaving[];
  /**
   * Only while this PATCH's entries are live at `liveAt` (its undo), and takes them off, with the
   * activity entry the PATCH owed (`owed`, its id): an undone PATCH is not recorded.
   */
  takeOff?: { patch: string; liveAt: Date; owed?: string };
  /** The activity entry the changes owe, stored with them (owed-activity.ts). */
  owed?: OwedActivityEntry;
}

/**
 * An activity entry a change of the user owes the record, written with the change in one update
 * and taken off once the record holds it (the protocol in owed-activity.ts).
 */
export interface OwedActivityEntry {
  /** The entry's activity id (24 hex digits), drawn at the change: it goes in under this id once. */
  id: string;
  action: ActivityAction;
  actor: ActivityActor;
  /** The client the entry names (the app a passkey was added through). */
  clientId?: string;
  comments?: string;
  /** The change's time, the entry's `at`. */
  at: Date;
  /** Set on an entry stored before its change, which another collection holds (owed-activity-ahead.ts). */
  ahead?: ChangeAhead;
}

/**
 * The change an entry stored ahead of it waits for: which kind (`change`, the name its check is
 * known by) and what tells it was made (`key`: a passkey's id, a sign-in lock's time).
 */
export interface ChangeAhead {
  change: string;
  key: string;
}

/** A user who owes the record entries, as the sweep takes it. */
export interface UserOwingActivity extends UserRef {
  owedActivity: OwedActivityEntry[];
}

interface UserDoc extends User {
  groupsLeaving?: GroupLeaving[];
  owedActivity?: OwedActivityEntry[];
  /** Until when a sweep holds this user's owed entries (no other sweep takes them meanwhile). */
  owedActivityLeaseUntil?: Date;
  /**
   * `<enterpriseId>:<mobileNumberKey of the number>` while the user is not DELETED, absent otherwise. A
   * sparse unique index on it keeps a phone to one live user per enterprise (partial indexes are
   * not honoured by the local server, and a sparse compound index would still index every user).
   * Not the number as sent: `15550100002` and `+15550100002` are one
   * phone (mobile-number-key.ts).
   */
  liveMobileKey?: string;
}

export const userSchema = new Schema<UserDoc>(
  {
    enterpriseId: { type: String, required: true },
    userId: { type: String, required: true },
    loginId: { type: String, required: true },
    primaryGroup: { type: String, required: true },
    secondaryGroups: { type: [String], default: [] },
    firstName: { type: String, required: true },
    lastName: { type: String, required: true },
    emailId: { type: String },
    mobileNumber: { type: String },
    liveMobileKey: { type: String },
    groupsLeaving: { type: [Schema.Types.Mixed], default: undefined },
    owedActivity: { type: [Schema.Types.Mixed], default: undefined },
    owedActivityLeaseUntil: { type: Date },
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
userSchema.index({ enterpriseId: 1, userId: 1 }, { unique: true });
userSchema.index({ liveMobileKey: 1 }, { unique: true, sparse: true });
// The enterprise's user list: oldest first, userId breaking ties (unique within the enterprise).
userSchema.index({ enterpriseId: 1, createdAt: 1, userId: 1 });
// The sweeps' look-ups (unsent activation messages, unwritten activity entries): only users with
// something to sweep are in these sparse indexes, so a sweep every SWEEPER_INTERVAL_MS reads a
// handful of entries instead of the whole collection.
userSchema.index({ 'activation.codeEncrypted': 1 }, { sparse: true });
userSchema.index({ 'owedActivity.at': 1 }, { sparse: true });

/** The users model once its unique indexes exist (they carry the enrollment race-safety). */
export function userModel(connection: Connection): Promise<Model<UserDoc>> {
  return modelFor(connection, 'User', userSchema);
}

/** The user's unique key for a mobile number: the phone its SMS goes to, within the enterprise. */
export const liveMobileKey = (scope: EnterpriseScope, mobileNumber: string) => `${scope.enterpriseId}:${mobileNumberKey(mobileNumber)}`;

/** The stored document of a user (the derived unique key included). */
export function toUserDoc(user: User): UserDoc {
  return {
    ...user,
    ...(user.status !== 'DELETED' && user.mobileNumber ? { liveMobileKey: liveMobileKey(user, user.mobileNumber) } : {}),
  };
}

function toUser(doc: UserDoc & { _id?: unknown; liveMobileNumber?: unknown }): User {
  const {
    _id,
    liveMobileKey: _key,
    liveMobileNumber: _legacy,
    groupsLeaving: _leaving,
    owedActivity: _owed,
    owedActivityLeaseUntil: _lease,
    ...user
  } = doc;
  void _id;
  return user;
}

const pending = { $in: [...PENDING_STATUSES] };
const notBlocked = { blocked: { $exists: false } };

export function createUsersRepository(connection: Connection) {
  const model = () => userModel(connection);
  // Look-ups of concurrent requests share one query on the unique (enterpriseId, userId) index.
  const lookups = createBatchedLookup(
    async (keys: string[]) => {
      const refs = keys.map(userRefFromKey);
      // Matches may include other pairs of the two sets; keyOf drops what nobody asked for.
      return (await model()).collection.find<UserDoc>(anyOfUsersFilter(refs)).toArray();
    },
    (doc) => userKey(doc),
    toUser,
  );
  return {
    /**
     * THE look-up of a user: always by enterprise and userId, so no caller can reach another
     * enterprise's user. Returns the user in any status (DELETED included).
     */
    findUser(ref: UserRef): Promise<User | undefined> {
      return lookups.submit(userKey(ref));
    },

    /**
     * Only what an activation check needs (status, activation, block), through the same
     * (enterpriseId, userId) look-up: a small reply, so a found user costs about what a missing
     * one does (the public activation route must not tell them apart by timing).
     */
    async findActivationState(ref: UserRef): Promise<Pick<User, 'status' | 'activation' | 'blocked'> | undefined> {
      const doc = await (
        await model()
      ).collection.findOne<Pick<UserDoc, 'status' | 'activation' | 'blocked'>>(userFilter(ref), {
        projection: { _id: 0, status: 1, activation: 1, blocked: 1 },
      });
      return doc ?? undefined;
    },

    /**
     * The user of this enterprise who is not DELETED and holds this mobile number, if any: the
     * same phone, however the '+' was typed by either (liveMobileKey).
     */
    async findLiveByMobile(scope: EnterpriseScope, mobileNumber: string): Promise<User | undefined> {
      // liveMobileKey starts with the enterpriseId: the key itself confines the look-up.
      const doc = await (await model()).collection.findOne<UserDoc>({ liveMobileKey: liveMobileKey(scope, mobileNumber) });
      return doc ? toUser(doc) : undefined;
    },

    /**
     * How many users that are not DELETED name the group as primary or secondary group, or hold
     * it in a live GroupLeaving entry at `now` (a PATCH in flight may write it back), among
     * `members`: one enterprise's users (its own group), or every enterprise's but those listed
     * (a shared group: the listed ones have their own group of the name).
     */
    async countLiveInGroup(groupName: string, members: GroupMembers, now = new Date()): Promise<number> {
      const among = 'enterpriseId' in members ? scopeFilter(members) : outsideEnterprisesFilter(members.exceptEnterprises);
      return (await model()).countDocuments({
        ...among,
        status: { $ne: 'DELETED' },
        $or: [
          { primaryGroup: groupName },
          { secondaryGroups: groupName },
          { groupsLeaving: { $elemMatch: { group: groupName, until: { $gt: now } } } },
        ],
      });
    },

    /** Takes this PATCH's GroupLeaving entries off the user, and any lapsed at `lapsedAt`. */
    async takeOffGroupsLeaving(ref: UserRef, patch: string, lapsedAt: Date): Promise<void> {
      const Users = await model();
      await Users.updateOne(userFilter(ref), { $pull: { groupsLeaving: { patch } } });
      await Users.updateOne(userFilter(ref), { $pull: { groupsLeaving: { until: { $lte: lapsedAt } } } });
    },

    /**
     * Inserts the user, owing `owed` (its enrollment's activity entry) when given; a duplicate
     * (enterpriseId, userId) or live mobile number throws MongoDB's error 11000.
     */
    async insert(user: User, owed?: OwedActivityEntry): Promise<void> {
      // Through the driver, as the look-ups above: the enrollment builds the whole user, so a
      // mongoose document (casting, validation, change tracking, an Error built per save) would
      // only cost CPU on every enrollment. The unique indexes still refuse a duplicate (11000).
      await (await model()).collection.insertOne({ ...toUserDoc(user), ...(owed ? { owedActivity: [owed] } : {}) });
    },

    /**
     * Removes the user an enrollment inserted and then undid, matched by its `createdAt` so that
     * no other enrollment's user is touched.
     */
    async removeUndoneEnrollment(ref: UserRef, createdAt: Date): Promise<void> {
      await (await model()).deleteOne({ ...userFilter(ref), createdAt });
    },

    /**
     * ACTIVE once, for this code issue only, and only while the user is not blocked (a block
     * stored after the check read the user wins); false when the user changed meanwhile. The
     * activation also stores `owed`, the activity entry it owes, in the same update.
     */
    async completeActivation(
      ref: UserRef,
      issue: number,
      device: UserDevice | undefined,
      now: Date,
      owed: OwedActivityEntry,
    ): Promise<boolean> {
      const result = await (
        await model()
      ).updateOne(
        { ...userFilter(ref), ...notBlocked, status: pending, 'activation.issue': issue, 'activation.expiresAt': { $gt: now } },
        {
          $set: { status: 'ACTIVE', activatedAt: now, updatedAt: now, ...(device ? { device } : {}) },
          $unset: { activation: 1 },
          $push: { owedActivity: owed },
        },
      );
      return result.modifiedCount === 1;
    },

    /**
     * Replaces the activation of a pending user whose current issue is `previousIssue`, unless the
     * user is blocked (a block stored after the re-issue read the user wins).
     */
    async replaceActivation(
      ref: UserRef,
      previousIssue: number,
      activation: UserActivation,
      now: Date,
      owed?: OwedActivityEntry,
    ): Promise<boolean> {
      const result = await (
        await model()
      ).updateOne(
        { ...userFilter(ref), ...notBlocked, status: pending, 'activation.issue': previousIssue },
        { $set: { activation, updatedAt: now }, ...(owed ? { $push: { owedActivity: owed } } : {}) },
      );
      return result.modifiedCount === 1;
    },

    /**
     * Ends the pending activation's code for good (a block): it expires now and its encrypted
     * copy goes, so no message of it is prepared. The issue and verification key stay, so an
     * admin can re-issue a code later. Repeating it changes nothing.
     */
    async endPendingActivation(ref: UserRef, now: Date): Promise<void> {
      await (
        await model()
      ).updateOne(
        { ...userFilter(ref), status: pending, 'activation.expiresAt': { $gt: now } },
        { $set: { 'activation.expiresAt': now, updatedAt: now }, $unset: { 'activation.codeEncrypted': 1 } },
      );
    },

    /**
     * Pending activations whose messages were never prepared (the enrollment job was lost):
     * the encrypted code is still on the user long after it was issued. Those the sweep failed
     * to prepare wait until their `preparationRetryAt` (at `now`), so they do not fill every batch.
     */
    async findUnpreparedActivations(olderThan: Date, limit: number, now: Date): Promise<(UserRef & { issue: number; failures: number })[]> {
      const docs = await (
        await model()
      )
        .find(
          {
            status: pending,
            'activation.codeEncrypted': { $exists: true },
            updatedAt: { $lt: olderThan },
            $or: [{ 'activation.preparationRetryAt': { $exists: false } }, { 'activation.preparationRetryAt': { $lte: now } }],
          },
          { enterpriseId: 1, userId: 1, 'activation.issue': 1, 'activation.preparationFailures': 1 },
        )
        .sort({ updatedAt: 1, _id: 1 }) // _id: a tie-break, or equal times come in any order
        .limit(limit)
        .lean<{ enterpriseId: string; userId: string; activation: { issue: number; preparationFailures?: number } }[]>();
      return docs.map((d) => ({ ...userRefOf(d), issue: d.activation.issue, failures: d.activation.preparationFailures ?? 0 }));
    },

    /**
     * Counts a failed preparation of this issue's messages and puts the next try off until
     * `retryAt`. `updatedAt` stays: nothing about the user changed (a PATCH reading it is not
     * made to start again).
     */
    async deferActivationPreparation(ref: UserRef, issue: number, retryAt: Date): Promise<void> {
      await (
        await model()
      ).updateOne(
        { ...userFilter(ref), 'activation.issue': issue, 'activation.codeEncrypted': { $exists: true } },
        { $set: { 'activation.preparationRetryAt': retryAt }, $inc: { 'activation.preparationFailures': 1 } },
      );
    },

    /** Drops the encrypted code once the activation deliveries hold their own copy. */
    async clearActivationCode(ref: UserRef, issue: number): Promise<void> {
      await (await model()).updateOne({ ...userFilter(ref), 'activation.issue': issue }, { $unset: { 'activation.codeEncrypted': 1 } });
    },

    /**
     * Blocks (with an optional reason) or unblocks the user, in one conditional update that writes
     * only a change: 'changed' when this call changed the user, 'unchanged' when it was already so
     * (unblocked, or blocked for the same reason, or none both times: `blocked.at` stays), undefined
     * when unknown. A block for another reason is a change: the new reason, at `now`. A change
     * also stores `owed`, the activity entry it owes, in the same update.
     */
    async setBlocked(
      ref: UserRef,
      blocked: boolean,
      reason: string | undefined,
      now: Date,
      owed?: OwedActivityEntry,
    ): Promise<'changed' | 'unchanged' | undefined> {
      const Users = await model();
      const sameReason = reason === undefined ? { 'blocked.reason': { $exists: false } } : { 'blocked.reason': reason };
      const owes = owed ? { $push: { owedActivity: owed } } : {};
      const result = blocked
        ? await Users.updateOne(
            { ...userFilter(ref), $nor: [{ blocked: { $exists: true }, ...sameReason }] },
            { $set: { blocked: { at: now, ...(reason !== undefined ? { reason } : {}) }, updatedAt: now }, ...owes },
          )
        : await Users.updateOne(
            { ...userFilter(ref), blocked: { $exists: true } },
            { $unset: { blocked: 1 }, $set: { updatedAt: now }, ...owes },
          );
      if (result.matchedCount === 1) return 'changed';
      // Only which answer: the write above already decided that nothing was to change.
      return (await Users.exists(userFilter(ref))) !== null ? 'unchanged' : undefined;
    },

    /**
     * One page of the enterprise's users, oldest first with userId breaking ties, so pages neither
     * skip nor repeat a user whatever is enrolled meanwhile. `more` when users remain after it.
     */
    async listPage(query: UserListQuery): Promise<{ users: User[]; more: boolean }> {
      const filter: Record<string, unknown> = scopeFilter(query);
      if (query.status !== undefined) filter.status = query.status;
      if (query.group !== undefined) filter.$and = [{ $or: [{ primaryGroup: query.group }, { secondaryGroups: query.group }] }];
      if (query.after !== undefined) {
        const { createdAt, userId } = query.after;
        filter.$and = [
          ...((filter.$and as unknown[] | undefined) ?? []),
          { $or: [{ createdAt: { $gt: createdAt } }, { createdAt, userId: { $gt: userId } }] },
        ];
      }
      const docs = await (
        await model()
      )
        .find(filter)
        .sort({ createdAt: 1, userId: 1 })
        .limit(query.limit + 1)
        .lean<UserDoc[]>();
      return { users: docs.slice(0, query.limit).map(toUser), more: docs.length > query.limit };
    },

    /**
     * Applies the changes if the user is still as read (`updatedAt` unchanged) and not DELETED:
     * a concurrent change makes this false, and the caller re-reads and checks again. A mobile
     * number held by another live user throws MongoDB's error 11000 (the unique index decides).
     * `leaving` adds or takes off the PATCH's GroupLeaving entries in the same update, and stores
     * or takes off the activity entry it owes.
     */
    async applyChanges(ref: UserRef, readAt: Date, changes: UserChanges, now: Date, leaving: GroupsLeavingUpdate = {}): Promise<boolean> {
      const set: Record<string, unknown> = { updatedAt: now };
      const unset: Record<string, 1> = {};
      for (const [field, value] of Object.entries(changes)) {
        if (value === undefined) continue;
        if (value === null) unset[field] = 1;
        else set[field] = value;
      }
      if (changes.mobileNumber === null) unset.liveMobileKey = 1;
      else if (changes.mobileNumber !== undefined) set.liveMobileKey = liveMobileKey(ref, changes.mobileNumber);
      const { add, takeOff, owed } = leaving;
      const pull = {
        ...(takeOff ? { groupsLeaving: { patch: takeOff.patch } } : {}),
        ...(takeOff?.owed !== undefined ? { owedActivity: { id: takeOff.owed } } : {}),
      };
      const push = {
        ...(add && add.length > 0 ? { groupsLeaving: { $each: add } } : {}),
        ...(owed ? { owedActivity: owed } : {}),
      };
      const result = await (
        await model()
      ).updateOne(
        {
          ...userFilter(ref),
          status: { $ne: 'DELETED' },
          updatedAt: readAt,
          ...(takeOff ? { groupsLeaving: { $elemMatch: { patch: takeOff.patch, until: { $gt: takeOff.liveAt } } } } : {}),
        },
        {
          $set: set,
          ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
          ...(Object.keys(push).length > 0 ? { $push: push } : {}),
          ...(Object.keys(pull).length > 0 ? { $pull: pull } : {}),
        },
      );
      return result.modifiedCount === 1;
    },

    /**
     * DELETED: frees the mobile number and ends any pending activation. 'deleted' when this call
     * changed the user, 'already' when it was DELETED before, undefined when unknown. A change
     * also stores `owed`, the activity entry it owes, in the same update.
     */
    async markDeleted(ref: UserRef, now: Date, owed?: OwedActivityEntry): Promise<'deleted' | 'already' | undefined> {
      const Users = await model();
      const result = await Users.updateOne(
        { ...userFilter(ref), status: { $ne: 'DELETED' } },
        {
          $set: { status: 'DELETED', updatedAt: now },
          $unset: { liveMobileKey: 1, activation: 1 },
          ...(owed ? { $push: { owedActivity: owed } } : {}),
        },
      );
      if (result.matchedCount === 1) return 'deleted';
      // Deleting twice is not an error: the user exists, already DELETED.
      return (await Users.exists(userFilter(ref))) !== null ? 'already' : undefined;
    },

    /**
     * Stores these entries as owed by the user (entries stored ahead of a change in another
     * collection, and copies of them once that change is known made): false for an unknown user.
     */
    async oweActivity(ref: UserRef, entries: OwedActivityEntry[]): Promise<boolean> {
      const result = await (await model()).updateOne(userFilter(ref), { $push: { owedActivity: { $each: entries } } });
      return result.matchedCount === 1;
    },

    /** The activity entries the user's changes still owe the record (none for an unknown user). */
    async findOwedActivity(ref: UserRef): Promise<OwedActivityEntry[]> {
      const doc = await (
        await model()
      ).collection.findOne<Pick<UserDoc, 'owedActivity'>>(userFilter(ref), { projection: { _id: 0, owedActivity: 1 } });
      return doc?.owedActivity ?? [];
    },

    /**
     * Takes these owed entries off the user: the record holds them, or their change was not made
     * (an entry stored ahead of it, owed-activity.ts). Others stay (a change made meanwhile).
     */
    async settledOwedActivity(ref: UserRef, ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      const Users = await model();
      // Mostly these are all the user owes (an enrollment's one entry, say): then the field goes
      // in one update, which matches only while no other entry is there. Its condition and its
      // change are one atomic write, so an entry pushed meanwhile either stops it or comes after.
      // Through the driver: it runs on every enrollment and activation, where a mongoose query's
      // casting and bookkeeping only cost CPU.
      const allOwed = await Users.collection.updateOne(
        { ...userFilter(ref), owedActivity: { $not: { $elemMatch: { id: { $nin: ids } } } } },
        { $unset: { owedActivity: 1 } },
      );
      if (allOwed.matchedCount === 1) return;
      await Users.updateOne(userFilter(ref), { $pull: { owedActivity: { id: { $in: ids } } } });
      // Gone once empty (unless a change owing another entry came meanwhile), so the user leaves
      // the sweep's sparse index.
      await Users.updateOne({ ...userFilter(ref), owedActivity: { $size: 0 } }, { $unset: { owedActivity: 1 } });
    },

    /**
     * Users owing an entry older than `olderThan` whose lease is free at `now`, each leased to this
     * caller until `leaseUntil` (a conditional update per user, so two sweeps never take the same one).
     */
    async claimOwedActivity(olderThan: Date, now: Date, leaseUntil: Date, limit: number): Promise<UserOwingActivity[]> {
      const Users = await model();
      const free = { $or: [{ owedActivityLeaseUntil: { $exists: false } }, { owedActivityLeaseUntil: { $lte: now } }] };
      const owing = await Users.collection
        .find<UserDoc>({ 'owedActivity.at': { $lt: olderThan }, ...free }, { projection: { enterpriseId: 1, userId: 1, owedActivity: 1 } })
        .limit(limit)
        .toArray();
      const claimed: UserOwingActivity[] = [];
      for (const doc of owing) {
        const ref = userRefOf(doc);
        const taken = await Users.collection.updateOne({ ...userFilter(ref), ...free }, { $set: { owedActivityLeaseUntil: leaseUntil } });
        if (taken.modifiedCount === 1) claimed.push({ ...ref, owedActivity: doc.owedActivity ?? [] });
      }
      return claimed;
    },

    /** Ends a sweep's lease on the user's owed entries. */
    async releaseOwedActivity(ref: UserRef, leaseUntil: Date): Promise<void> {
      await (
        await model()
      ).collection.updateOne({ ...userFilter(ref), owedActivityLeaseUntil: leaseUntil }, { $unset: { owedActivityLeaseUntil: 1 } });
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
