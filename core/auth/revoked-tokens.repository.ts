import { Schema, type Connection } from 'mongoose';
import { modelFor } from '../platform/db/model-registry.js';

/**
 * Revoked self-contained access tokens (enterprise JWTs), by `jti`, until they would have
 * expired. A JWT is checked without the store, so every API process consults this list
 * (core/auth/revocation-checks.ts) to refuse one its client revoked.
 */
interface RevokedToken {
  jti: string;
  clientId: string;
  revokedAt: Date;
  expiresAt: Date;
}

export const revokedTokenSchema = new Schema<RevokedToken>(
  {
    jti: { type: String, required: true },
    clientId: { type: String, required: true },
    revokedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { collection: 'revoked_tokens', versionKey: false },
);
revokedTokenSchema.index({ jti: 1 }, { unique: true });
// Real MongoDB drops rows once the token would have expired anyway; reads check expiry too.
revokedTokenSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const model = (connection: Connection) => modelFor(connection, 'RevokedToken', revokedTokenSchema);

export function createRevokedTokensRepository(connection: Connection) {
  return {
    /** Records the revocation; revoking twice is the same as once. */
    async revoke(token: { jti: string; clientId: string; expiresAt: Date }, now: Date): Promise<void> {
      const Revoked = await model(connection);
      await Revoked.updateOne(
        { jti: token.jti },
        { $setOnInsert: { jti: token.jti, clientId: token.clientId, revokedAt: now, expiresAt: token.expiresAt } },
        { upsert: true },
      );
    },
    async isRevoked(jti: string, now: Date): Promise<boolean> {
      const Revoked = await model(connection);
      return (await Revoked.exists({ jti, expiresAt: { $gt: now } })) !== null;
    },
  };
}

export type RevokedTokensRepository = ReturnType<typeof createRevokedTokensRepository>;
