import { Schema, type Connection } from 'mongoose';
import { modelFor } from '../platform/db/model-registry.js';

/** What the authorization server persists (sessions, grants, codes, interactions...), by kind and id. */
export interface OidcRecord {
  kind: string;
  key: string;
  payload: Record<string, unknown>;
  grantId?: string;
  userCode?: string;
  uid?: string;
  /** The account (`<enterpriseId>:<userId>`) of sessions, grants, codes and user tokens. */
  accountId?: string;
  expiresAt?: Date;
  /** Set on a user's access token when the account was blocked: it never works again. */
  endedAt?: Date;
}

export const oidcRecordSchema = new Schema<OidcRecord>(
  {
    kind: { type: String, required: true },
    key: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    grantId: { type: String },
    userCode: { type: String },
    uid: { type: String },
    accountId: { type: String },
    expiresAt: { type: Date },
    endedAt: { type: Date },
  },
  { collection: 'oidc_records', versionKey: false, minimize: false },
);
oidcRecordSchema.index({ kind: 1, key: 1 }, { unique: true });
oidcRecordSchema.index({ grantId: 1 }, { sparse: true });
oidcRecordSchema.index({ kind: 1, uid: 1 }, { sparse: true });
// Blocking ends everything of one account at once.
oidcRecordSchema.index({ accountId: 1 }, { sparse: true });
oidcRecordSchema.index({ kind: 1, userCode: 1 }, { sparse: true });
// Real MongoDB drops expired rows; mongo-java-server never does, so reads check expiry too.
oidcRecordSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const model = (connection: Connection) => modelFor(connection, 'OidcRecord', oidcRecordSchema);

const live = () => ({ $or: [{ expiresAt: { $exists: false } }, { expiresAt: null }, { expiresAt: { $gt: new Date() } }] });

/**
 * The kinds a grant issues: revoking a grant ends these. Other records may name a grant too (an
 * Interaction under way carries the grant it would extend) and must survive its revocation:
 * signing the previous person out while another signs in revokes that grant mid-interaction.
 */
export const GRANT_ISSUED_KINDS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];

export function createOidcRecordsRepository(connection: Connection) {
  return {
    async upsertOidcRecord(record: OidcRecord): Promise<void> {
      const Records = await model(connection);
      await Records.replaceOne({ kind: record.kind, key: record.key }, record, { upsert: true });
    },

    async findOidcRecord(
      kind: string,
      by: { key: string } | { uid: string } | { userCode: string },
    ): Promise<Record<string, unknown> | undefined> {
      const Records = await model(connection);
      const found = await Records.findOne({ kind, ...by, ...live() }, { _id: 0, payload: 1 }).lean<{ payload: Record<string, unknown> }>();
      return found?.payload;
    },

    /**
     * Marks a one-time record (authorization code, refresh token) as used if it was not: true when
     * this call did; otherwise the record's grant id (or undefined when the record is gone), so the
     * caller can treat the loser of a race as a replay.
     */
    async consumeOidcRecord(kind: string, key: string): Promise<true | string | undefined> {
      const Records = await model(connection);
      const result = await Records.updateOne(
        { kind, key, 'payload.consumed': { $exists: false }, ...live() },
        { $set: { 'payload.consumed': Math.floor(Date.now() / 1000) } },
      );
      if (result.modifiedCount === 1) return true;
      const found = await Records.findOne({ kind, key, ...live() }, { _id: 0, grantId: 1 }).lean<{ grantId?: string }>();
      return found?.grantId;
    },

    async deleteOidcRecord(kind: string, key: string): Promise<void> {
      const Records = await model(connection);
      await Records.deleteOne({ kind, key });
    },

    async deleteOidcRecordsOfGrant(grantId: string): Promise<void> {
      const Records = await model(connection);
      await Records.deleteMany({ grantId, kind: { $in: GRANT_ISSUED_KINDS } });
    },

    /** A stored access token with whether blocking its account ended it. */
    async findAccessTokenRecord(key: string): Promise<{ payload: Record<string, unknown>; ended: boolean } | undefined> {
      const Records = await model(connection);
      const found = await Records.findOne({ kind: 'AccessToken', key, ...live() }, { _id: 0, payload: 1, endedAt: 1 }).lean<{
        payload: Record<string, unknown>;
        endedAt?: Date;
      }>();
      return found ? { payload: found.payload, ended: found.endedAt !== undefined && found.endedAt !== null } : undefined;
    },

    /**
     * Ends everything the authorization server holds for an account: its access tokens are marked
     * ended (kept until they expire, so the API can still tell a blocked user apart from a stranger),
     * and its sessions, grants, codes and refresh tokens are deleted. Access tokens are marked again
     * once the grants are gone: a token being issued meanwhile is written either before that (and
     * marked) or after (and its issuer finds no grant, api/auth-server/oidc-adapter.ts). Idempotent:
     * running it again finishes what an interrupted run left.
     */
    async endOidcRecordsOfAccount(accountId: string, now: Date): Promise<void> {
      const Records = await model(connection);
      const markAccessTokens = () =>
        Records.updateMany({ accountId, kind: 'AccessToken', endedAt: { $exists: false } }, { $set: { endedAt: now } });
      await markAccessTokens();
      await Records.deleteMany({ accountId, kind: { $ne: 'AccessToken' } });
      await markAccessTokens();
    },
  };
}

export type OidcRecordsRepository = ReturnType<typeof createOidcRecordsRepository>;
