import { randomBytes } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';

/**
 * Where one sign-in page session stands, keyed by the authorization server's interaction id.
 * The code itself lives in the OTP pipeline (otpUuid); a user who gets no code (unknown,
 * DELETED, blocked) has a `decoy` counter instead, so both answer a wrong code alike.
 */
export interface LoginState {
  uid: string;
  clientId: string;
  /** The page's CSRF token (hidden input of every form). */
  csrf: string;
  userId?: string;
  otpUuid?: string;
  decoyAttemptsUsed?: number;
  codeSentAt?: Date;
  /** The challenge of the passkey sign-in the user-id page offers (a new one each time it is shown). */
  passkeyChallenge?: string;
  /** When that challenge was issued: it is good for as long as the page asks the browser to try. */
  passkeyChallengeIssuedAt?: Date;
  expiresAt: Date;
}

type LoginStateDoc = LoginState;

export const loginStateSchema = new Schema<LoginStateDoc>(
  {
    uid: { type: String, required: true },
    clientId: { type: String, required: true },
    csrf: { type: String, required: true },
    userId: { type: String },
    otpUuid: { type: String },
    decoyAttemptsUsed: { type: Number },
    codeSentAt: { type: Date },
    passkeyChallenge: { type: String },
    passkeyChallengeIssuedAt: { type: Date },
    expiresAt: { type: Date, required: true },
  },
  { collection: 'login_states', versionKey: false },
);
loginStateSchema.index({ uid: 1 }, { unique: true });
// Real MongoDB drops ended states; the local server never does, so reads check expiry too.
loginStateSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const PROJECTION = { _id: 0 } as const;

export function createLoginStatesRepository(connection: Connection) {
  const model = () => modelFor(connection, 'LoginState', loginStateSchema);
  const live = (uid: string) => ({ uid, expiresAt: { $gt: new Date() } });

  return {
    /** The state of this interaction, created with a fresh CSRF token on first sight. */
    async open(uid: string, clientId: string, expiresAt: Date): Promise<LoginState> {
      const Model = await model();
      const upsert = () =>
        Model.findOneAndUpdate(
          { uid },
          { $setOnInsert: { uid, clientId, csrf: randomBytes(32).toString('base64url'), expiresAt } },
          { upsert: true, new: true, projection: PROJECTION },
        ).lean<LoginState>();
      try {
        return (await upsert()) as LoginState;
      } catch (err) {
        // Two first loads of one page at once: the loser's insert hits the unique index; the
        // state now exists, so the retry reads it.
        if (!isDuplicateKeyError(err)) throw err;
        return (await upsert()) as LoginState;
      }
    },

    async find(uid: string): Promise<LoginState | undefined> {
      return (await (await model()).findOne(live(uid), PROJECTION).lean<LoginState>()) ?? undefined;
    },

    /**
     * The user id entered: the same write for every kind of id. The state starts as a decoy (its
     * own counter, no code); a real code is attached once it has been generated (attachCode).
     */
    async setUser(uid: string, userId: string, now: Date): Promise<void> {
      await (await model()).updateOne(live(uid), { $set: { userId, decoyAttemptsUsed: 0, codeSentAt: now }, $unset: { otpUuid: 1 } });
    },

    /**
     * The code generated for the user id set at `requestedAt` replaces the decoy, unless the page
     * moved on meanwhile (another id, a newer code) or a code was already checked against the
     * decoy (the answers of that page then stay those of a decoy; a new code starts over).
     */
    async attachCode(uid: string, userId: string, requestedAt: Date, otpUuid: string): Promise<boolean> {
      const res = await (
        await model()
      ).updateOne(
        { ...live(uid), userId, codeSentAt: requestedAt, decoyAttemptsUsed: 0 },
        { $set: { otpUuid }, $unset: { decoyAttemptsUsed: 1 } },
      );
      return res.modifiedCount === 1;
    },

    /**
     * Counts one check of a decoy code atomically, as the OTP pipeline counts real ones: the
     * attempts used after this one, or undefined when none was left.
     */
    async takeDecoyAttempt(uid: string, maxAttempts: number): Promise<number | undefined> {
      const doc = await (
        await model()
      )
        .findOneAndUpdate(
          { ...live(uid), decoyAttemptsUsed: { $lt: maxAttempts } },
          { $inc: { decoyAttemptsUsed: 1 } },
          { new: true, projection: PROJECTION },
        )
        .lean<LoginState>();
      return doc?.decoyAttemptsUsed;
    },

    /** A fresh passkey challenge for the page being shown; the one before it no longer works. */
    async setPasskeyChallenge(uid: string, challenge: string, issuedAt: Date): Promise<boolean> {
      const res = await (await model()).updateOne(live(uid), { $set: { passkeyChallenge: challenge, passkeyChallengeIssuedAt: issuedAt } });
      return res.matchedCount === 1;
    },

    /**
     * The page's passkey challenge, used up by this call whatever the answer turns out to be, so
     * an answer is checked against it once; undefined when there is none (used, or never shown)
     * or when it was issued at or before `issuedAfter` (the interaction outlives it).
     */
    async takePasskeyChallenge(uid: string, issuedAfter: Date): Promise<string | undefined> {
      const doc = await (
        await model()
      )
        .findOneAndUpdate(
          { ...live(uid), passkeyChallenge: { $exists: true } },
          { $unset: { passkeyChallenge: 1, passkeyChallengeIssuedAt: 1 } },
          { new: false, projection: PROJECTION },
        )
        .lean<LoginState>();
      const issuedAt = doc?.passkeyChallengeIssuedAt;
      return issuedAt !== undefined && issuedAt > issuedAfter ? doc?.passkeyChallenge : undefined;
    },

    /** "Use another account": back to the user id form. */
    async clearUser(uid: string): Promise<void> {
      await (await model()).updateOne(live(uid), { $unset: { userId: 1, otpUuid: 1, decoyAttemptsUsed: 1, codeSentAt: 1 } });
    },
  };
}

export type LoginStatesRepository = ReturnType<typeof createLoginStatesRepository>;
