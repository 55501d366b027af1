import { Schema, Types, type Connection } from 'mongoose';
import { createOwingCollection } from '../activity/owing-collection.js';
import { indexOwedEntries, notDeleted, owing, owingSchemaFields, type OwedEntry, type OwingFields } from '../activity/owed-entries.js';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import { ConflictError } from '../platform/errors/app-error.js';
import { groupOwnerFields, groupOwnerFilter, storedGroupOwner, type GroupOwner, type OwnedGroupName } from './group-owner.js';
import { ownedByAnEnterpriseFilter } from '../platform/tenancy/tenant-filter.js';

/** A user group (primary and secondary groups of enrolled users refer to it by name). */
export interface Group {
  name: string;
  description: string | null;
  /** The enterprise whose users alone may name it; absent: a shared group, every enterprise's users may. */
  enterpriseId?: string;
  createdAt: Date;
}

/** Where a page of a group list ended: the last group's name and document id. */
export interface GroupListPosition {
  name: string;
  /** 24 hex digits. */
  id: string;
}

/**
 * Set by a group deletion while it decides (core/users/group-deletion.service.ts): until `until`,
 * the group takes no new members, and only the deletion holding `token` may remove it.
 */
export interface GroupDeletionMarker {
  token: string;
  until: Date;
}

interface GroupDoc extends Group, OwingFields {
  deletion?: GroupDeletionMarker;
  /** The Idempotency-Key claim of the request that created it: its retry finds it (never shown). */
  creationClaimId?: string;
}

export const groupSchema = new Schema<GroupDoc>(
  {
    name: { type: String, required: true },
    description: { type: String, default: null },
    enterpriseId: { type: String },
    createdAt: { type: Date, required: true },
    deletion: { type: Schema.Types.Mixed },
    creationClaimId: { type: String },
    ...owingSchemaFields,
  },
  { collection: 'groups', versionKey: false },
);
// A deleted group stays, marked, until its entry is written: every read below leaves it out (a
// user may not join it), and creating the name again takes the document over.
// Names are unique per owner: the shared groups (no enterpriseId, indexed as null: one shared group
// per name) and each enterprise's own.
groupSchema.index({ enterpriseId: 1, name: 1 }, { unique: true });
// The admin list of every owner's groups, by name (names repeat across owners; the id orders them).
groupSchema.index({ name: 1, _id: 1 });
indexOwedEntries(groupSchema);

const model = (connection: Connection) => modelFor(connection, 'Group', groupSchema);

/** Groups no deletion is deciding on at `now`: no marker, or one past its deadline (its deletion stopped). */
const withoutLiveMarker = (now: Date) => ({ ...notDeleted, $or: [{ deletion: { $exists: false } }, { 'deletion.until': { $lte: now } }] });
// The markers and owed entries are the deletion's and the record's business; a group is shown without them.
const hidden = { deletion: 0, owedActivity: 0, owedActivityLeaseUntil: 0, deletedAt: 0, creationClaimId: 0 };
const shown = { _id: 0, ...hidden };
/** How often a creation tries again when the deleted group holding its name is removed between the insert and the take-over. */
const TAKE_OVER_ATTEMPTS = 3;

export function createGroupsRepository(connection: Connection) {
  /**
   * Up to `limit` (0: no limit) groups of a list (as listGroups), after the position `after` (the
   * last one of the previous page), each with its position. The position is the name and the
   * document's id: names repeat across owners, so the name alone cannot say where a page ended.
   */
  async function listGroupsAfter(
    enterpriseId: string | undefined,
    after: GroupListPosition | undefined,
    limit: number,
  ): Promise<{ group: Group; position: GroupListPosition }[]> {
    const Groups = await model(connection);
    const filter = {
      ...(enterpriseId === undefined ? {} : groupOwnerFilter(enterpriseId)),
      ...notDeleted,
      ...(after === undefined
        ? {}
        : { $or: [{ name: { $gt: after.name } }, { name: after.name, _id: { $gt: new Types.ObjectId(after.id) } }] }),
    };
    const rows = await Groups.find(filter, hidden).sort({ name: 1, _id: 1 }).limit(limit).lean<(Group & { _id: Types.ObjectId })[]>();
    return rows.map(({ _id, ...group }) => ({ group, position: { name: group.name, id: _id.toHexString() } }));
  }

  return {
    /**
     * Creates a group, with the entry its creation owes; ConflictError (409) when the name exists,
     * decided by the unique index. A deleted group still owing its entry is taken over: its
     * fields replaced, its owed entries kept.
     */
    async createGroup(
      input: { name: string; description?: string; enterpriseId?: string },
      owed?: OwedEntry,
      creationClaimId?: string,
    ): Promise<Group> {
      const Groups = await model(connection);
      const owner = groupOwnerFilter(input.enterpriseId);
      const group: Group = {
        name: input.name,
        description: input.description ?? null,
        ...groupOwnerFields(input.enterpriseId),
        createdAt: owed?.at ?? new Date(),
      };
      const stored = { ...group, ...(creationClaimId ? { creationClaimId } : {}) };
      for (let attempt = 1; attempt <= TAKE_OVER_ATTEMPTS; attempt++) {
        try {
          await Groups.create({ ...stored, ...(owed ? { owedActivity: [owed] } : {}) });
          return group;
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        const taken = await Groups.updateOne(
          { name: input.name, ...owner, deletedAt: { $exists: true } },
          { $set: stored, $unset: { deletedAt: 1, deletion: 1, ...(creationClaimId ? {} : { creationClaimId: 1 }) }, ...owing(owed) },
        );
        if (taken.matchedCount === 1) return group;
        // Neither: a group has the name, or the deleted one was removed meanwhile (insert again).
        if (await Groups.exists({ name: input.name, ...owner, ...notDeleted })) break;
      }
      throw new ConflictError(`Group ${input.name} already exists`);
    },

    /** One owner's group of this name if the Idempotency-Key claim `creationClaimId` created it. */
    async findGroupCreatedBy(name: string, owner: GroupOwner, creationClaimId: string): Promise<Group | undefined> {
      const Groups = await model(connection);
      return (await Groups.findOne({ name, ...groupOwnerFilter(owner), ...notDeleted, creationClaimId }, shown).lean<Group>()) ?? undefined;
    },

    /** One owner's group of this name (absent owner: the shared one). */
    async findGroup(name: string, owner?: GroupOwner): Promise<Group | undefined> {
      const Groups = await model(connection);
      return (await Groups.findOne({ name, ...groupOwnerFilter(owner), ...notDeleted }, shown).lean<Group>()) ?? undefined;
    },

    /**
     * The enterprises that have their own group of this name: their users' name means it, so a
     * deletion of the shared group of the name does not count them.
     */
    async enterprisesWithOwnGroup(name: string): Promise<string[]> {
      const Groups = await model(connection);
      const owned = await Groups.find({ name, ...ownedByAnEnterpriseFilter(), ...notDeleted }, { _id: 0, enterpriseId: 1 }).lean<
        { enterpriseId: string }[]
      >();
      return owned.map((g) => g.enterpriseId);
    },

    /**
     * Puts a deletion's marker on the group unless another deletion's live marker is there; false
     * when the group is missing or another deletion is deciding on it.
     */
    async markForDeletion(name: string, owner: GroupOwner, marker: GroupDeletionMarker, now: Date): Promise<boolean> {
      const Groups = await model(connection);
      return (
        (await Groups.updateOne({ name, ...groupOwnerFilter(owner), ...withoutLiveMarker(now) }, { $set: { deletion: marker } }))
          .matchedCount === 1
      );
    },

    /** Takes this deletion's marker off the group (the deletion refused); nothing when it is not there. */
    async unmarkForDeletion(name: string, owner: GroupOwner, token: string): Promise<void> {
      const Groups = await model(connection);
      await Groups.updateOne({ name, ...groupOwnerFilter(owner), 'deletion.token': token }, { $unset: { deletion: 1 } });
    },

    /**
     * Deletes the group only if it still carries this deletion's marker and the marker is still
     * live at `liveAt`; false otherwise (nothing changed). Deleted means marked, with the entry
     * the deletion owes, in one write: every read treats it as gone at once, and it is removed
     * once the entry is written.
     */
    async removeGroupStillMarked(name: string, owner: GroupOwner, token: string, liveAt: Date, owed: OwedEntry): Promise<boolean> {
      const Groups = await model(connection);
      const result = await Groups.updateOne(
        { name, ...groupOwnerFilter(owner), ...notDeleted, 'deletion.token': token, 'deletion.until': { $gt: liveAt } },
        { $set: { deletedAt: owed.at }, $unset: { deletion: 1 }, ...owing(owed) },
      );
      return result.matchedCount === 1;
    },

    /**
     * The groups of a list, by name, then id: one enterprise's own, or
     * every group, shared and owned, when `enterpriseId` is absent (an operator's view of them all).
     */
    async listGroups(enterpriseId?: string): Promise<Group[]> {
      return (await listGroupsAfter(enterpriseId, undefined, 0)).map(({ group }) => group);
    },

    listGroupsAfter,

    /**
     * The names among `names` that are not groups a user of the enterprise may join, in the order
     * given (duplicates once). A name means the enterprise's own group of that name, else the
     * shared one, never another enterprise's (answered as missing, so no enterprise learns another's
     * group names). It is missing when that group is absent or being deleted (a live deletion
     * marker), which takes no new members: an own group being deleted does not fall back to the
     * shared one until it is gone.
     */
    async findMissingGroupNames(enterpriseId: string, names: string[], now = new Date()): Promise<string[]> {
      const unique = [...new Set(names)];
      if (unique.length === 0) return [];
      const Groups = await model(connection);
      // Through the driver: read on every enrollment (twice) and every PATCH of groups, where a
      // mongoose query's casting and bookkeeping only cost CPU (the filter holds strings alone).
      const found = await Groups.collection
        .find<{ name: string; enterpriseId?: string; deletion?: GroupDeletionMarker }>(
          { name: { $in: unique }, $or: [groupOwnerFilter(enterpriseId), groupOwnerFilter(undefined)], ...notDeleted },
          { projection: { _id: 0, name: 1, enterpriseId: 1, deletion: 1 } },
        )
        .toArray();
      const meant = new Map<string, (typeof found)[number]>();
      for (const group of found) if (group.enterpriseId !== undefined || !meant.has(group.name)) meant.set(group.name, group);
      const joinable = (group: (typeof found)[number] | undefined) =>
        group !== undefined && (group.deletion === undefined || group.deletion.until.getTime() <= now.getTime());
      return unique.filter((name) => !joinable(meant.get(name)));
    },

    /** The entries group changes owe the record, by group name and owner. */
    owedActivity: createOwingCollection<OwnedGroupName>({
      name: 'groups',
      model: () => model(connection) as never,
      filter: ({ name, owner }) => ({ name, ...groupOwnerFilter(owner) }),
      keyFields: ['name', 'enterpriseId'],
      keyOf: (doc) => ({ name: String(doc.name), owner: storedGroupOwner(doc) }),
      // An enterprise's own group is named in that enterprise's record too.
      subject: ({ name, owner }) => ({ groupName: name, ...groupOwnerFields(owner) }),
    }),
  };
}

export type GroupsRepository = ReturnType<typeof createGroupsRepository>;
