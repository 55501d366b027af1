import type { Connection } from 'mongoose';
import { sweepCollection, type SweepSlices } from '../platform/db/collection-sweep.js';
import { hasCompleted, recordCompleted, type RecordedStep } from '../platform/db/migration-records.js';
import { isMongoError, MONGO_CODES } from '../platform/db/mongo-error-codes.js';
import type { Logger } from '../platform/logger/logger.js';
import { liveMobileKey, userModel } from './users.repository.js';

/**
 * The step's completion record (migration-records.ts). This version of the service writes every key
 * it stores in the form the step gives (users.repository.ts: enrollment, a changed number), so once
 * the step has run to its end nothing is left for it; version 1 is the form with the '+'
 * (mobile-number-key.ts). A version that keys numbers another way raises it.
 */
export const MOBILE_KEYS_STEP: RecordedStep = { name: 'mobile number keys', version: 1 };

/** A live user left without the unique key of its number: an earlier user's number reaches the same phone. */
export interface WithheldMobileKey {
  enterpriseId: string;
  userId: string;
  /** The earlier enrolled user who keeps the key. */
  keptBy: string;
}

interface KeyedUser {
  _id: unknown;
  enterpriseId: string;
  userId: string;
  status?: string;
  mobileNumber: string;
  liveMobileKey?: string;
  createdAt: Date;
}

/** Whose number is keyed: every user but a deleted one, with a mobile number. */
const isLiveWithNumber = (user: KeyedUser) => user.status !== 'DELETED' && user.mobileNumber !== undefined;

/** Enrollment order: the earlier user keeps a shared phone's key. */
const enrolledBefore = (a: KeyedUser, b: KeyedUser) =>
  a.createdAt.getTime() < b.createdAt.getTime() || (a.createdAt.getTime() === b.createdAt.getTime() && a.userId < b.userId);

/**
 * Gives every live user with a mobile number the key of the phone its SMS goes to (liveMobileKey),
 * where a version before stored the number as sent: `15550100002` and `+15550100002` were two keys.
 * Two live users of an enterprise whose numbers reach one phone cannot both have it (the unique
 * index): the earlier enrolled keeps it, the later one is left without a key, logged and returned
 * for an operator to settle (change or remove one number); nothing else about the user changes.
 * A step of the migration command: idempotent (a settled user is left alone, a withheld one is
 * reported again, and gets its key once the other number is gone), and safe to repeat after a
 * crash, each write being conditional on what was read. Users are read in slices in the order of
 * the users' (enterpriseId, createdAt, userId) index (collection-sweep.ts): keys are per
 * enterprise, so enrollment order within one is all the earlier-keeps rule needs, and MongoDB
 * sorts nothing (a sort of every user before the first answer outlasts the socket timeout on a
 * large collection). A run that reaches the end with every live number keyed (none withheld, none
 * taken meanwhile) records it (MOBILE_KEYS_STEP), and later runs stop at that record: users
 * written during or after the run by this version's API are keyed as this step keys them, and two
 * runs at once both read everything and write the same record.
 */
export async function migrateLiveMobileKeys(connection: Connection, logger: Logger, slices?: SweepSlices): Promise<WithheldMobileKey[]> {
  // Ran to its end once with nothing withheld, and no key of before written since: a look-up of the
  // record and one per enterprise, no user read (MOBILE_KEYS_STEP).
  if ((await hasCompleted(connection, MOBILE_KEYS_STEP)) && !(await holdsKeysOfBefore(connection))) return [];
  // The unique index must be there before keys move: it is what finds the shared phones.
  const users = (await userModel(connection)).collection;
  const withheld: WithheldMobileKey[] = [];
  let rekeyed = 0;
  /** A key another process took while this run moved it: the next run must read every user again. */
  let leftToMove = false;
  const projection = { _id: 1, enterpriseId: 1, userId: 1, status: 1, mobileNumber: 1, liveMobileKey: 1, createdAt: 1 } as const;

  /** Sets the user's key if the user is still as read: false when another user holds it. */
  async function setKey(user: KeyedUser, key: string): Promise<boolean> {
    try {
      const result = await users.updateOne(
        {
          _id: user._id as never,
          status: { $ne: 'DELETED' },
          mobileNumber: user.mobileNumber,
          liveMobileKey: user.liveMobileKey ?? { $exists: false },
        },
        { $set: { liveMobileKey: key } },
      );
      rekeyed += result.modifiedCount;
      return true;
    } catch (err) {
      if (!isMongoError(err, MONGO_CODES.DuplicateKey)) throw err;
      return false;
    }
  }

  const withheldIds = new Set<string>();
  function withhold(user: KeyedUser, keptBy: string): void {
    // A user withheld as a holder may be met again further on: reported once.
    const id = JSON.stringify([user.enterpriseId, user.userId]);
    if (withheldIds.has(id)) return;
    withheldIds.add(id);
    withheld.push({ enterpriseId: user.enterpriseId, userId: user.userId, keptBy });
    logger.warn(
      { enterpriseId: user.enterpriseId, userId: user.userId, keptBy },
      "mobile number reaches the same phone as an earlier user's: left without its unique key until one of them is changed",
    );
  }

  /** Keys one live user's number; false when nothing changed (its key was in this form already). */
  async function keyUser(user: KeyedUser): Promise<boolean> {
    const key = liveMobileKey(user, user.mobileNumber);
    if (user.liveMobileKey === key) return false;
    if (await setKey(user, key)) return true;
    const holder = await users.findOne<KeyedUser>({ liveMobileKey: key });
    if (holder && enrolledBefore(holder, user)) {
      const unset = await users.updateOne(
        { _id: user._id as never, liveMobileKey: user.liveMobileKey ?? { $exists: false } },
        { $unset: { liveMobileKey: 1 } },
      );
      withhold(user, holder.userId);
      // Withheld by an earlier run already: nothing changes.
      return unset.modifiedCount > 0;
    }
    // A later user holds it (its number was already in this form): the key goes to this, the earlier, user.
    if (holder) await users.updateOne({ _id: holder._id as never, liveMobileKey: key }, { $unset: { liveMobileKey: 1 } });
    if (await setKey(user, key)) {
      if (holder) withhold(holder, user.userId);
    } else {
      // Taken again meanwhile (processes writing during the migration): the user keeps its old key.
      leftToMove = true;
      logger.warn({ enterpriseId: user.enterpriseId, userId: user.userId }, 'mobile number key not moved: run the migration again');
    }
    return true;
  }

  await sweepCollection<KeyedUser>(
    users,
    {
      step: 'mobile number keys',
      projection,
      order: { enterpriseId: 1, createdAt: 1, userId: 1 },
      migrate: async (slice) => {
        let changed = 0;
        for (const user of slice) if (isLiveWithNumber(user) && (await keyUser(user))) changed += 1;
        return changed;
      },
    },
    logger,
    slices,
  );
  if (rekeyed > 0) logger.info({ rekeyed, withheld: withheld.length }, 'mobile number keys now compare the number with or without its +');
  // After the last slice only, and only when nothing is left: a withheld user gets its key from a
  // later run once the phone is free (the operator changed or deleted one of the two users), which
  // the API does not do for it.
  if (withheld.length === 0 && !leftToMove) await recordCompleted(connection, MOBILE_KEYS_STEP);
  return withheld;
}

/**
 * Whether a user holds a key in the form of before the '+' (the enterprise's id, ':', then a digit):
 * an API of that version still running after the step recorded its end (a rolling upgrade that
 * went on after the migration, a rollback) writes such keys, and the record alone would hide them
 * from every later run. One look-up of the live-mobile index per enterprise: enterprise ids hold no
 * ':', and in that index the keys of one enterprise that start with a digit lie between `<id>:0`
 * and `<id>::` (':' sorts right after '9'). The enterprises come from the users' enterpriseId-first
 * index (MongoDB answers `distinct` on it from the index alone).
 */
async function holdsKeysOfBefore(connection: Connection): Promise<boolean> {
  const users = connection.collection('users');
  for (const enterpriseId of await users.distinct('enterpriseId')) {
    if (typeof enterpriseId !== 'string') continue;
    const keyOfBefore = { $gte: `${enterpriseId}:0`, $lt: `${enterpriseId}::` };
    if (await users.findOne({ liveMobileKey: keyOfBefore }, { projection: { _id: 1 } })) return true;
  }
  return false;
}

const holdsUsersOfBeforeEnterprises = async (connection: Connection) =>
  (await connection.collection('users').findOne({ enterpriseId: { $exists: false } }, { projection: { _id: 1 } })) !== null;

/**
 * Live users whose mobile number the migration would key again (`npm run migrate -- --check`):
 * a key in an older form, or none although no other user holds the phone's. Read only. A user
 * left without its key because an earlier user holds it is the operator's to settle and not
 * counted: the migration would leave it as it is.
 */
export async function countStaleMobileKeys(connection: Connection, logger: Logger, slices?: SweepSlices): Promise<number> {
  // The migration would pass over them all after these same look-ups, unless users of before
  // enterprises came back (a rollback to such a version): its enterprise step then forgets the
  // record. Such users have no enterpriseId, which the users' enterpriseId-first indexes find.
  if (
    (await hasCompleted(connection, MOBILE_KEYS_STEP)) &&
    !(await holdsUsersOfBeforeEnterprises(connection)) &&
    !(await holdsKeysOfBefore(connection))
  )
    return 0;
  const users = connection.collection('users');
  let stale = 0;
  // In slices, as the migration reads them: one find filtering a large collection, or a 16 MB batch
  // with a look-up per user before the next getMore, would outlast the socket or the cursor's timeout.
  await sweepCollection<KeyedUser>(
    users,
    {
      step: 'mobile number keys check',
      projection: { _id: 1, enterpriseId: 1, userId: 1, status: 1, mobileNumber: 1, liveMobileKey: 1 },
      migrate: async (slice) => {
        for (const user of slice) {
          if (!isLiveWithNumber(user)) continue;
          const key = liveMobileKey(user, user.mobileNumber);
          if (user.liveMobileKey === key) continue;
          if (user.liveMobileKey !== undefined || !(await users.findOne({ liveMobileKey: key }, { projection: { _id: 1 } }))) stale++;
        }
        // Read only.
        return 0;
      },
    },
    logger,
    slices,
  );
  return stale;
}
