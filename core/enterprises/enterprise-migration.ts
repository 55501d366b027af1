import type { Collection, Connection } from 'mongoose';
import { sweepCollection, type SweepSlices } from '../platform/db/collection-sweep.js';
import { dropIndexByKey } from '../platform/db/drop-index.js';
import { isMongoError, MONGO_CODES } from '../platform/db/mongo-error-codes.js';
import type { Logger } from '../platform/logger/logger.js';
import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import { forgetCompleted } from '../platform/db/migration-records.js';
import { MOBILE_KEYS_STEP } from '../users/live-mobile-keys.migration.js';

/** Indexes of before enterprises: unique per deployment where they are now unique per enterprise. */
export const PRE_ENTERPRISE_INDEXES: [collection: string, index: string][] = [
  ['users', 'userId_1'],
  ['users', 'liveMobileNumber_1'],
  ['otps', 'userId_1_createdAt_-1'],
  ['otp_idempotency_keys', 'clientId_1_key_1'],
];

/** Collections whose records belong to an enterprise. */
const TENANT_COLLECTIONS = ['clients', 'users', 'otps', 'otp_idempotency_keys', 'deliveries'];

/** A document as the step reads it: whether it has an enterprise, and a user's number of before. */
interface Unmigrated {
  _id: unknown;
  enterpriseId?: unknown;
  liveMobileNumber?: unknown;
}

/**
 * Brings data written before enterprises existed into the `default` enterprise; a step of the
 * migration command (idempotent, and safe when several processes run it at once; no
 * transactions needed: each step can be repeated after a crash). Order matters: the old deployment-wide unique indexes go
 * first, so a second enterprise's user with a taken userId or mobile number is not refused by
 * them; the new indexes are created by the models afterwards. Each collection is read in slices
 * (collection-sweep.ts): one updateMany over a collection of tens of millions of documents would
 * outlast the socket timeout, and a run cut off is finished by the next.
 */
export async function migrateToEnterprises(connection: Connection, logger: Logger, slices?: SweepSlices): Promise<void> {
  const dropped: string[] = [];
  for (const [collection, index] of PRE_ENTERPRISE_INDEXES) {
    if (await dropIndexByKey(connection, collection, index)) dropped.push(`${collection}.${index}`);
  }
  const counts = { tagged: 0, rekeyed: 0, leftForSettling: 0 };
  for (const name of TENANT_COLLECTIONS) {
    const collection = connection.collection(name);
    const isUsers = name === 'users';
    if (!(await holdsDataOfBefore(collection, isUsers))) continue;
    // Users of before get their keys in the older form here (the number as stored), which the
    // mobile-number step must then go over: its record goes first, so a run cut off in between
    // leaves the next to do both (a rollback to such a version, then this one again).
    if (isUsers) await forgetCompleted(connection, MOBILE_KEYS_STEP);
    await sweepCollection<Unmigrated>(
      collection,
      {
        step: 'enterprises',
        projection: isUsers ? { _id: 1, enterpriseId: 1, liveMobileNumber: 1 } : { _id: 1, enterpriseId: 1 },
        migrate: async (slice) => {
          const changed = new Set<unknown>();
          const untagged = slice.filter((doc) => !('enterpriseId' in doc)).map((doc) => doc._id);
          if (untagged.length > 0) {
            // Conditional as the whole-collection update was: a document tagged meanwhile keeps its enterprise.
            const result = await collection.updateMany({ _id: { $in: untagged }, enterpriseId: { $exists: false } } as never, {
              $set: { enterpriseId: DEFAULT_ENTERPRISE_ID },
            });
            counts.tagged += result.modifiedCount;
            untagged.forEach((id) => changed.add(id));
          }
          if (isUsers) {
            for (const doc of slice.filter((user) => 'liveMobileNumber' in user)) {
              await rekeyLiveMobileNumber(collection, doc, counts);
              changed.add(doc._id);
            }
          }
          return changed.size;
        },
      },
      logger,
      slices,
    );
  }
  if (dropped.length > 0 || counts.tagged > 0 || counts.rekeyed > 0 || counts.leftForSettling > 0)
    logger.info({ dropped, ...counts }, 'migrated data to enterprises');
}

/**
 * Whether the step has anything left in the collection. Migrate runs before every deployment, and
 * once the data is migrated a sweep would read every document again to change none: a look-up
 * that finds one document to migrate is enough to skip it. A document without an enterprise is
 * found through the collection's enterpriseId-first indexes (built by the first migrated run; a
 * missing field is indexed as null); a user's number of before has no index left (its unique one
 * is dropped first), so that look-up is MongoDB scanning users on its side, as the step always did.
 */
async function holdsDataOfBefore(collection: Collection, isUsers: boolean): Promise<boolean> {
  const projection = { _id: 1 };
  if (await collection.findOne({ enterpriseId: { $exists: false } }, { projection })) return true;
  return isUsers && (await collection.findOne({ liveMobileNumber: { $exists: true } }, { projection })) !== null;
}

/** The live-mobile unique key becomes per enterprise: `<enterpriseId>:<number>`. */
async function rekeyLiveMobileNumber(
  users: Collection,
  doc: Unmigrated,
  counts: { rekeyed: number; leftForSettling: number },
): Promise<void> {
  const enterpriseId = typeof doc.enterpriseId === 'string' ? doc.enterpriseId : DEFAULT_ENTERPRISE_ID;
  const mine = { _id: doc._id, liveMobileNumber: doc.liveMobileNumber } as never;
  try {
    await users.updateOne(mine, {
      $set: { liveMobileKey: `${enterpriseId}:${String(doc.liveMobileNumber)}` },
      $unset: { liveMobileNumber: 1 },
    });
    counts.rekeyed += 1;
  } catch (err) {
    if (!isMongoError(err, MONGO_CODES.DuplicateKey)) throw err;
    // A user of this version holds the phone already (enrolled during a rolling upgrade, once the
    // old index was gone): this one is left without a key, and the next step, which settles
    // users sharing a phone, gives the key to the earlier enrolled and reports the other.
    // Stopping here instead would stop every later run at this user.
    await users.updateOne(mine, { $unset: { liveMobileNumber: 1 } });
    counts.leftForSettling += 1;
  }
}
