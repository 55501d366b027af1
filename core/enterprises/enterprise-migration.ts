import type { Connection } from 'mongoose';
import { dropIndexByKey } from '../platform/db/drop-index.js';
import { isMongoError, MONGO_CODES } from '../platform/db/mongo-error-codes.js';
import type { Logger } from '../platform/logger/logger.js';
import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';

/** Indexes of before enterprises: unique per deployment where they are now unique per enterprise. */
export const PRE_ENTERPRISE_INDEXES: [collection: string, index: string][] = [
  ['users', 'userId_1'],
  ['users', 'liveMobileNumber_1'],
  ['otps', 'userId_1_createdAt_-1'],
  ['otp_idempotency_keys', 'clientId_1_key_1'],
];

/** Collections whose records belong to an enterprise. */
const TENANT_COLLECTIONS = ['clients', 'users', 'otps', 'otp_idempotency_keys', 'deliveries'];

/**
 * Brings data written before enterprises existed into the `default` enterprise; a step of the
 * migration command (idempotent, and safe when several processes run it at once; no
 * transactions needed: each step can be repeated after a crash). Order matters: the old deployment-wide unique indexes go
 * first, so a second enterprise's user with a taken userId or mobile number is not refused by
 * them; the new indexes are created by the models afterwards.
 */
export async function migrateToEnterprises(connection: Connection, logger: Logger): Promise<void> {
  const dropped: string[] = [];
  for (const [collection, index] of PRE_ENTERPRISE_INDEXES) {
    if (await dropIndexByKey(connection, collection, index)) dropped.push(`${collection}.${index}`);
  }
  let tagged = 0;
  for (const name of TENANT_COLLECTIONS) {
    const result = await connection
      .collection(name)
      .updateMany({ enterpriseId: { $exists: false } }, { $set: { enterpriseId: DEFAULT_ENTERPRISE_ID } });
    tagged += result.modifiedCount;
  }
  // The live-mobile unique key becomes per enterprise: `<enterpriseId>:<number>`.
  const users = connection.collection('users');
  let rekeyed = 0;
  let leftForSettling = 0;
  for await (const doc of users.find(
    { liveMobileNumber: { $exists: true } },
    { projection: { _id: 1, enterpriseId: 1, liveMobileNumber: 1 } },
  )) {
    const enterpriseId = typeof doc.enterpriseId === 'string' ? doc.enterpriseId : DEFAULT_ENTERPRISE_ID;
    const mine = { _id: doc._id, liveMobileNumber: doc.liveMobileNumber };
    try {
      await users.updateOne(mine, {
        $set: { liveMobileKey: `${enterpriseId}:${String(doc.liveMobileNumber)}` },
        $unset: { liveMobileNumber: 1 },
      });
      rekeyed += 1;
    } catch (err) {
      if (!isMongoError(err, MONGO_CODES.DuplicateKey)) throw err;
      // A user of this version holds the phone already (enrolled during a rolling upgrade, once the
      // old index was gone): this one is left without a key, and the next step, which settles
      // users sharing a phone, gives the key to the earlier enrolled and reports the other.
      // Stopping here instead would stop every later run at this user.
      await users.updateOne(mine, { $unset: { liveMobileNumber: 1 } });
      leftForSettling += 1;
    }
  }
  if (dropped.length > 0 || tagged > 0 || rekeyed > 0 || leftForSettling > 0)
    logger.info({ dropped, tagged, rekeyed, leftForSettling }, 'migrated data to enterprises');
}
