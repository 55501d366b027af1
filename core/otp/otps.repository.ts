import { Schema, type Connection, type mongo } from 'mongoose';
import { createBatchedLookup, createGroupCommit, settleBulkWrite, STORE_BATCHING } from '../platform/batching/group-commit.js';
import { modelFor, withoutUndefined } from '../platform/db/model-registry.js';
import type { EnterpriseScope, UserRef } from '../platform/tenancy/enterprise-id.js';
import { scopeFilter, userFilter } from '../platform/tenancy/tenant-filter.js';
import type { Channel } from '../deliveries/delivery.types.js';

export type OtpStatus = 'ACTIVE' | 'USED' | 'LOCKED' | 'CANCELLED';

export interface OtpRecord {
  otpUuid: string;
  /** The enterprise of the client and of the user (records written before enterprises: `default`). */
  enterpriseId: string;
  clientId: string;
  userId: string;
  digest: string;
  hashSpec: string;
  attempts: number;
  attemptsUsed: number;
  status: OtpStatus;
  expiresAt: Date;
  generateJwt: boolean;
  msgId?: string;
  channels: Channel[];
  /**
   * The request's fallback channel (`fallbackDispatchOptions`): where the code goes once when
   * every other way of a message failed (delivery-failover.ts), with the address read at request time.
   */
  fallback?: { channel: Channel; template: string; to: string };
  /**
   * The code, encrypted, kept only until the delivery rows exist, so a retried request can
   * finish a half-done acceptance with the same code. Removed right after.
   */
  codeEncrypted?: string;
  /**
   * The code, encrypted (AES-256-GCM, bound to `resend:<otpUuid>`), kept while the OTP may still
   * be resent; dropped when it is used, locked or cancelled. Absent on OTPs made before resends.
   */
  resendCode?: string;
  /** Ids of the resends made so far (part of their delivery ids), oldest first. */
  resends?: string[];
  createdAt: Date;
  usedAt?: Date;
  cancelledAt?: Date;
}

interface OtpDoc extends Omit<OtpRecord, 'otpUuid'> {
  _id: string;
}

export const otpSchema = new Schema<OtpDoc>(
  {
    _id: { type: String, required: true },
    enterpriseId: { type: String, required: true },
    clientId: { type: String, required: true },
    userId: { type: String, required: true },
    digest: { type: String, required: true },
    hashSpec: { type: String, required: true },
    attempts: { type: Number, required: true },
    attemptsUsed: { type: Number, required: true },
    status: { type: String, required: true },
    expiresAt: { type: Date, required: true },
    generateJwt: { type: Boolean, required: true },
    msgId: { type: String },
    channels: { type: [String], required: true },
    fallback: { type: new Schema({ channel: String, template: String, to: String }, { _id: false }), default: undefined },
    codeEncrypted: { type: String },
    resendCode: { type: String },
    resends: { type: [String], default: undefined },
    createdAt: { type: Date, required: true },
    usedAt: { type: Date },
    cancelledAt: { type: Date },
  },
  { versionKey: false, collection: 'otps' },
);
otpSchema.index({ enterpriseId: 1, userId: 1, createdAt: -1 });
/** Real MongoDB drops records this long after expiry; the local server never fires TTL indexes. */
export const OTP_KEPT_AFTER_EXPIRY_SECONDS = 7 * 24 * 3600;
otpSchema.index({ expiresAt: 1 }, { expireAfterSeconds: OTP_KEPT_AFTER_EXPIRY_SECONDS });

/** An OTP that may still be validated: not ended, unexpired, attempts left (the public ACTIVE). */
const stillActive = (now: Date) => ({ status: 'ACTIVE', expiresAt: { $gt: now }, $expr: { $lt: ['$attemptsUsed', '$attempts'] } });

/** Only records MongoDB's TTL would still keep: the same answer whether or not it has run yet. */
const notPurged = (now = new Date()) => ({ expiresAt: { $gt: new Date(now.getTime() - OTP_KEPT_AFTER_EXPIRY_SECONDS * 1000) } });

const toRecord = ({ _id, ...rest }: OtpDoc): OtpRecord => ({ otpUuid: _id, ...rest });

export function createOtpsRepository(connection: Connection) {
  const model = () => modelFor(connection, 'Otp', otpSchema);
  // Records of concurrent requests go out in one unordered insert (see group-commit.ts).
  const inserts = createGroupCommit<OtpRecord, void>(async (records) => {
    const docs = records.map(({ otpUuid, ...rest }) => withoutUndefined({ _id: otpUuid, ...rest }));
    return settleBulkWrite(
      records.map((_, i) => i),
      records.length,
      async () => (await model()).collection.insertMany(docs as never[], { ordered: false }),
    );
  }, STORE_BATCHING);
  // The dispatch worker's check before each send: concurrent jobs share one `$in` query.
  const statuses = createBatchedLookup(
    async (ids: string[]) => {
      const collection = (await model()).collection as unknown as mongo.Collection<{ _id: string; status: OtpStatus }>;
      return collection.find({ _id: { $in: ids } }, { projection: { status: 1 } }).toArray();
    },
    (doc) => doc._id,
    (doc): OtpStatus => doc.status,
  );
  return {
    /** Inserts a record with a new uuid. */
    async insert(record: OtpRecord): Promise<OtpRecord> {
      await inserts.submit(record);
      return record;
    },

    /** Inserts the record unless one with this uuid exists; returns the stored one either way. */
    async insertIfAbsent(record: OtpRecord): Promise<OtpRecord> {
      const { otpUuid, ...rest } = record;
      const doc = await (
        await model()
      )
        .findOneAndUpdate({ _id: otpUuid }, { $setOnInsert: rest }, { upsert: true, new: true })
        .lean<OtpDoc>();
      if (!doc) throw new Error('upsert returned no document');
      return toRecord(doc);
    },

    async clearCode(otpUuid: string): Promise<void> {
      await (await model()).updateOne({ _id: otpUuid }, { $unset: { codeEncrypted: 1 } });
    },

    /** For the operator (any client of the enterprise, login codes included). */
    async findInEnterprise(otpUuid: string, scope: EnterpriseScope): Promise<OtpRecord | undefined> {
      const doc = await (await model()).findOne({ _id: otpUuid, ...scopeFilter(scope), ...notPurged() }).lean<OtpDoc>();
      return doc ? toRecord(doc) : undefined;
    },

    async findForClient(otpUuid: string, clientId: string): Promise<OtpRecord | undefined> {
      const doc = await (await model()).findOne({ _id: otpUuid, clientId, ...notPurged() }).lean<OtpDoc>();
      return doc ? toRecord(doc) : undefined;
    },

    /**
     * Takes one attempt atomically: succeeds only while the OTP is ACTIVE, unexpired and has
     * attempts left, so N parallel guesses never get more than `attempts` checks.
     */
    async takeAttempt(otpUuid: string, clientId: string, now: Date): Promise<OtpRecord | undefined> {
      const doc = await (
        await model()
      )
        .findOneAndUpdate({ _id: otpUuid, clientId, ...stillActive(now) }, { $inc: { attemptsUsed: 1 } }, { new: true })
        .lean<OtpDoc>();
      return doc ? toRecord(doc) : undefined;
    },

    /**
     * → USED exactly once: a correct code succeeds for one caller only. Called only by a check that
     * holds an attempt, so LOCKED is accepted too: a wrong guess racing it for the last attempts may
     * have locked the OTP first, and the correct code was still checked within `attempts`.
     */
    async markUsed(otpUuid: string, now: Date): Promise<boolean> {
      const result = await (
        await model()
      ).updateOne(
        { _id: otpUuid, status: { $in: ['ACTIVE', 'LOCKED'] } },
        { $set: { status: 'USED', usedAt: now }, $unset: { resendCode: 1 } },
      );
      return result.modifiedCount === 1;
    },

    async lockIfExhausted(otpUuid: string): Promise<void> {
      await (
        await model()
      ).updateOne(
        { _id: otpUuid, status: 'ACTIVE', $expr: { $gte: ['$attemptsUsed', '$attempts'] } },
        { $set: { status: 'LOCKED' }, $unset: { resendCode: 1 } },
      );
    },

    /**
     * ACTIVE → CANCELLED, only while the OTP could still be validated (a conditional update, so a
     * cancel racing a validation or another cancel is decided once). The record as cancelled, or
     * undefined when nothing changed (unknown, another client's, or already ended).
     */
    async cancel(otpUuid: string, clientId: string, now: Date): Promise<OtpRecord | undefined> {
      const doc = await (
        await model()
      )
        .findOneAndUpdate(
          { _id: otpUuid, clientId, ...stillActive(now) },
          { $set: { status: 'CANCELLED', cancelledAt: now }, $unset: { resendCode: 1 } },
          { new: true },
        )
        .lean<OtpDoc>();
      return doc ? toRecord(doc) : undefined;
    },

    /**
     * ACTIVE → CANCELLED for every OTP of the user that could still be validated (login codes
     * included, whichever client asked), when the user is blocked or deleted. The uuids it found;
     * one a validation used meanwhile stays USED (the update is conditional like `cancel`).
     */
    async cancelActiveOfUser(ref: UserRef, now: Date): Promise<string[]> {
      const Otps = await model();
      const found = await Otps.find({ ...userFilter(ref), ...stillActive(now) }, { _id: 1 }).lean<{ _id: string }[]>();
      const ids = found.map((doc) => doc._id);
      if (ids.length > 0)
        await Otps.updateMany(
          { _id: { $in: ids }, ...stillActive(now) },
          { $set: { status: 'CANCELLED', cancelledAt: now }, $unset: { resendCode: 1 } },
        );
      return ids;
    },

    /**
     * Adds a resend while the OTP is still active. A resend id already added (a retried or
     * duplicate request with the same Idempotency-Key) is not added again: `added` is false.
     */
    async addResend(
      otpUuid: string,
      clientId: string,
      resendId: string,
      now: Date,
    ): Promise<{ record: OtpRecord; added: boolean } | undefined> {
      const Otps = await model();
      const doc = await Otps.findOneAndUpdate(
        { _id: otpUuid, clientId, resendCode: { $exists: true }, resends: { $ne: resendId }, ...stillActive(now) },
        { $push: { resends: resendId } },
        { new: true },
      ).lean<OtpDoc>();
      if (doc) return { record: toRecord(doc), added: true };
      const again = await Otps.findOne({ _id: otpUuid, clientId, resends: resendId }).lean<OtpDoc>();
      return again ? { record: toRecord(again), added: false } : undefined;
    },

    /**
     * Drops the resend copy of codes of OTPs that expired in (`from`, `to`]: a range of the
     * expiry index, so a sweep reads only what expired since the previous one.
     */
    async dropExpiredResendCodes(from: Date, to: Date): Promise<number> {
      const result = await (
        await model()
      ).updateMany({ expiresAt: { $gt: from, $lte: to }, resendCode: { $exists: true } }, { $unset: { resendCode: 1 } });
      return result.modifiedCount;
    },

    /** The OTP's stored status (undefined once the record is gone): read right before each send. */
    statusOf(otpUuid: string): Promise<OtpStatus | undefined> {
      return statuses.submit(otpUuid);
    },
  };
}

export type OtpsRepository = ReturnType<typeof createOtpsRepository>;
