import { randomUUID } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { isDuplicateKeyError } from '../platform/db/duplicate-key.js';
import { modelFor } from '../platform/db/model-registry.js';
import type { EnterpriseScope, UserRef } from '../platform/tenancy/enterprise-id.js';
import { scopeFilter, userFilter } from '../platform/tenancy/tenant-filter.js';

/**
 * A user's passkey (a WebAuthn credential), in the user's enterprise. The public key and the
 * credential id are not secrets; the sign counter is what the last sign-in reported.
 */
export interface Passkey extends UserRef {
  /** Our id of the passkey (the routes' `{passkeyId}`), never the credential id. */
  id: string;
  /** The authenticator's credential id, base64url. */
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  /** The WebAuthn user handle of this user, base64url: the same for all their passkeys. */
  userHandle: string;
  transports: string[];
  name: string;
  /** Authenticator model (AAGUID; all zeros when the authenticator does not say). */
  aaguid: string;
  /** `multiDevice` for a synced passkey, `singleDevice` for one bound to its device. */
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt?: Date;
}

export const passkeySchema = new Schema<Passkey>(
  {
    id: { type: String, required: true },
    enterpriseId: { type: String, required: true },
    userId: { type: String, required: true },
    credentialId: { type: String, required: true },
    publicKey: { type: String, required: true },
    counter: { type: Number, required: true },
    userHandle: { type: String, required: true },
    transports: { type: [String], default: [] },
    name: { type: String, required: true },
    aaguid: { type: String, required: true },
    deviceType: { type: String, required: true },
    backedUp: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date },
  },
  { collection: 'passkeys', versionKey: false },
);
passkeySchema.index({ id: 1 }, { unique: true });
// One credential is one passkey, whoever registered it first.
passkeySchema.index({ credentialId: 1 }, { unique: true });
passkeySchema.index({ enterpriseId: 1, userId: 1, createdAt: 1 });

const PROJECTION = { _id: 0 } as const;

/** The credential id is already registered (to this user or another). */
export class DuplicatePasskeyError extends Error {}

export type NewPasskey = Omit<Passkey, 'id' | 'createdAt' | 'lastUsedAt'>;

export function createPasskeysRepository(connection: Connection) {
  const model = () => modelFor(connection, 'Passkey', passkeySchema);

  return {
    /** `id` drawn by the caller when it must name the passkey before it is stored (its activity entry, owed ahead). */
    async add(passkey: NewPasskey, now: Date, id: string = randomUUID()): Promise<Passkey> {
      const doc: Passkey = { ...passkey, id, createdAt: now };
      try {
        await (await model()).create(doc);
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new DuplicatePasskeyError('passkey already registered');
        throw err;
      }
      return doc;
    },

    /** The user's passkeys, oldest first. */
    async list(ref: UserRef): Promise<Passkey[]> {
      return (await model()).find(userFilter(ref), PROJECTION).sort({ createdAt: 1, id: 1 }).lean<Passkey[]>();
    },

    /** Whether the user has a passkey by that id. */
    async exists(ref: UserRef, id: string): Promise<boolean> {
      return (await (await model()).exists({ ...userFilter(ref), id })) !== null;
    },

    async count(ref: UserRef): Promise<number> {
      return (await model()).countDocuments(userFilter(ref));
    },

    /** The user handle of the user's passkeys, if they have one. */
    async userHandleOf(ref: UserRef): Promise<string | undefined> {
      const found = await (await model()).findOne(userFilter(ref), { _id: 0, userHandle: 1 }).lean<Pick<Passkey, 'userHandle'>>();
      return found?.userHandle;
    },

    /** A passkey by credential id, in this enterprise only: one of another enterprise is not found. */
    async findByCredential(scope: EnterpriseScope, credentialId: string): Promise<Passkey | undefined> {
      return (await (await model()).findOne({ ...scopeFilter(scope), credentialId }, PROJECTION).lean<Passkey>()) ?? undefined;
    },

    /**
     * Records a sign-in whose counter was checked against `passkey.counter` (compare-and-set):
     * false when another sign-in moved the counter first or the passkey was removed meanwhile.
     */
    async recordUse(passkey: Passkey, newCounter: number, now: Date): Promise<boolean> {
      const res = await (
        await model()
      ).updateOne({ id: passkey.id, counter: passkey.counter }, { $set: { counter: newCounter, lastUsedAt: now } });
      return res.matchedCount === 1;
    },

    /** Removes one of the user's passkeys, answering what it was; undefined when the user has none by that id. */
    async remove(ref: UserRef, id: string): Promise<Passkey | undefined> {
      return (await (await model()).findOneAndDelete({ ...userFilter(ref), id }, { projection: PROJECTION }).lean<Passkey>()) ?? undefined;
    },
  };
}

export type PasskeysRepository = ReturnType<typeof createPasskeysRepository>;
