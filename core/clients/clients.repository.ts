import { Schema, type Connection } from 'mongoose';
import { createOwingCollection } from '../activity/owing-collection.js';
import { indexOwedEntries, notDeleted, owing, owingSchemaFields, type OwedEntry, type OwingFields } from '../activity/owed-entries.js';
import { modelFor } from '../platform/db/model-registry.js';
import { clientFilter } from '../platform/tenancy/tenant-filter.js';

/** A named test user's fixed OTP (test clients only). */
export interface TestCode {
  userId: string;
  code: string;
}

export const CLIENT_SCOPES = ['otp', 'users', 'notifications'] as const;
export type ClientScope = (typeof CLIENT_SCOPES)[number];

/** A registered OAuth client, without its secret. */
export interface Client {
  clientId: string;
  /** The enterprise (tenant) whose users the client sees and changes. */
  enterpriseId: string;
  name: string;
  scopes: ClientScope[];
  allowedIps: string[];
  redirectUris: string[];
  /** Extra browser origins of a public client (see web-origins.ts); clients stored before the field existed have none. */
  webOrigins: string[];
  isPublic: boolean;
  /** First-party apps skip the consent page; clients stored before the field existed are first-party. */
  firstParty: boolean;
  /** A test client: its messages never reach a provider (docs/operations.md, "Test mode"); absent means false. */
  test?: boolean;
  /** Test clients only: fixed codes sent to these users instead of random ones. */
  testCodes?: TestCode[];
  createdAt: Date;
  /** Whether notification callbacks can be signed (read from the store; not written through this field). */
  hasCallbackSecret?: boolean;
}

/** The client plus the stored secret hash: only the authorization server reads this. */
export interface ClientWithSecret extends Client {
  secretHash: string | null;
  /** The secret replaced by the last rotation, accepted until `previousSecretExpiresAt` (client-secret-rotation.ts). */
  previousSecretHash?: string | null;
  previousSecretExpiresAt?: Date | null;
  /** The notification callback secret, AES-GCM encrypted with the server key (it must sign). */
  callbackSecretEncrypted?: string | null;
  /**
   * The Idempotency-Key claim of the rotation that set the current secret (null: set otherwise),
   * written with it: a retry resuming that claim finds the rotation done and does not rotate again.
   */
  secretRotationClaimId?: string | null;
}

/** What names a client in its activity entries: its id, and the enterprise the entries belong to. */
export type ClientKey = Pick<Client, 'clientId' | 'enterpriseId'>;

export const clientSchema = new Schema<ClientWithSecret & OwingFields>(
  {
    clientId: { type: String, required: true, unique: true },
    enterpriseId: { type: String, required: true },
    name: { type: String, required: true },
    scopes: { type: [String], default: [] },
    allowedIps: { type: [String], default: [] },
    redirectUris: { type: [String], default: [] },
    webOrigins: { type: [String], default: [] },
    isPublic: { type: Boolean, required: true },
    firstParty: { type: Boolean, default: true },
    test: { type: Boolean, default: false },
    testCodes: { type: [{ _id: false, userId: String, code: String }], default: [] },
    secretHash: { type: String, default: null },
    previousSecretHash: { type: String, default: null },
    previousSecretExpiresAt: { type: Date, default: null },
    callbackSecretEncrypted: { type: String, default: null },
    secretRotationClaimId: { type: String, default: null },
    createdAt: { type: Date, required: true },
    ...owingSchemaFields,
  },
  { collection: 'clients', versionKey: false },
);
// A deleted client stays, marked, until its entry is written: every read and change below leaves it out.
indexOwedEntries(clientSchema);

const model = (connection: Connection) => modelFor(connection, 'Client', clientSchema);

const withoutSecret = ({
  clientId,
  enterpriseId,
  name,
  scopes,
  allowedIps,
  redirectUris,
  webOrigins,
  isPublic,
  firstParty,
  test,
  testCodes,
  createdAt,
  callbackSecretEncrypted,
}: ClientWithSecret): Client => ({
  clientId,
  enterpriseId,
  name,
  scopes,
  allowedIps,
  redirectUris,
  webOrigins: webOrigins ?? [],
  isPublic,
  firstParty: firstParty !== false,
  test: test === true,
  testCodes: (testCodes ?? []).map(({ userId, code }) => ({ userId, code })),
  createdAt,
  hasCallbackSecret: typeof callbackSecretEncrypted === 'string' && callbackSecretEncrypted !== '',
});

const PROJECTION = { _id: 0, owedActivity: 0, owedActivityLeaseUntil: 0, deletedAt: 0 } as const;
/** A client no deletion has marked, by id. */
const live = (clientId: string) => ({ clientId, ...notDeleted });

export type UpdatableClientFields = Partial<
  Pick<Client, 'name' | 'scopes' | 'allowedIps' | 'redirectUris' | 'webOrigins' | 'test' | 'testCodes'>
>;

export function createClientsRepository(connection: Connection) {
  const repository = {
    /** Stores a new client with the entry its registration owes (owing-collection.ts). */
    async insertClient(client: ClientWithSecret, owed?: OwedEntry): Promise<Client> {
      const Clients = await model(connection);
      await Clients.create({ ...client, ...(owed ? { owedActivity: [owed] } : {}) });
      return withoutSecret(client);
    },

    async findClient(clientId: string): Promise<Client | null> {
      const found = await repository.findClientWithSecret(clientId);
      return found && withoutSecret(found);
    },

    async findClientWithSecret(clientId: string): Promise<ClientWithSecret | null> {
      const Clients = await model(connection);
      return Clients.findOne(live(clientId), PROJECTION).lean<ClientWithSecret>();
    },

    async listClients(): Promise<Client[]> {
      const Clients = await model(connection);
      const rows = await Clients.find(notDeleted, PROJECTION).sort({ createdAt: 1, clientId: 1 }).lean<ClientWithSecret[]>();
      return rows.map(withoutSecret);
    },

    /**
     * Up to `limit` clients in the order of listClients (oldest first, then by id), after the
     * client `after` names (the last one of the previous page).
     */
    async listClientsAfter(after: { createdAt: Date; clientId: string } | undefined, limit: number): Promise<Client[]> {
      const Clients = await model(connection);
      const filter =
        after === undefined
          ? notDeleted
          : {
              ...notDeleted,
              $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, clientId: { $gt: after.clientId } }],
            };
      const rows = await Clients.find(filter, PROJECTION).sort({ createdAt: 1, clientId: 1 }).limit(limit).lean<ClientWithSecret[]>();
      return rows.map(withoutSecret);
    },

    /**
     * Marks the client deleted, with the entry it owes, in one write: every lookup treats it as
     * gone at once (its tokens and secrets are refused), and it is removed once the entry is
     * written. True when a client was deleted.
     */
    async markClientDeleted(clientId: string, owed: OwedEntry): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne(live(clientId), { $set: { deletedAt: owed.at }, ...owing(owed) });
      return result.matchedCount === 1;
    },

    /** The encrypted callback secret, or null when the client has none (or does not exist). */
    async findCallbackSecretEncrypted(clientId: string): Promise<string | null> {
      const Clients = await model(connection);
      const row = await Clients.findOne(live(clientId), { _id: 0, callbackSecretEncrypted: 1 }).lean<{
        callbackSecretEncrypted?: string | null;
      }>();
      return row?.callbackSecretEncrypted ?? null;
    },

    /** Replaces the client's callback secret, with the entry the change owes; false when the client does not exist. */
    async setCallbackSecretEncrypted(clientId: string, encrypted: string, owed?: OwedEntry): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne(live(clientId), { $set: { callbackSecretEncrypted: encrypted }, ...owing(owed) });
      return result.matchedCount === 1;
    },

    /** Replaces the client's redirect URIs; false when the client does not exist. */
    async setRedirectUris(clientId: string, redirectUris: string[]): Promise<boolean> {
      return repository.updateClientFields(clientId, { redirectUris });
    },

    /**
     * Sets the fields, with the entry the change owes; with `whileTest`, only while the client's
     * test flag is still that value (fixed codes decided on the flag as read). False when the
     * client is gone or its flag changed.
     */
    async updateClientFields(clientId: string, fields: UpdatableClientFields, whileTest?: boolean, owed?: OwedEntry): Promise<boolean> {
      const Clients = await model(connection);
      const filter = whileTest === undefined ? live(clientId) : { ...live(clientId), test: whileTest ? true : { $ne: true } };
      const result = await Clients.updateOne(filter, { $set: fields, ...owing(owed) });
      return result.matchedCount === 1;
    },

    /**
     * Puts `secretHash` in place of the current secret only if the current one is still `currentHash`
     * (two rotations at once: one wins); the replaced hash stays accepted until `previousExpiresAt`,
     * or is dropped at once when that is null; with the entry the change owes and the rotation's
     * Idempotency-Key claim, if any. False when the client is gone or was rotated meanwhile.
     */
    async replaceSecretHash(
      clientId: string,
      currentHash: string,
      secretHash: string,
      previousExpiresAt: Date | null,
      owed?: OwedEntry,
      rotationClaimId?: string,
    ): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne(
        { ...live(clientId), secretHash: currentHash },
        {
          $set: {
            secretHash,
            previousSecretHash: previousExpiresAt === null ? null : currentHash,
            previousSecretExpiresAt: previousExpiresAt,
            secretRotationClaimId: rotationClaimId ?? null,
          },
          ...owing(owed),
        },
      );
      return result.matchedCount === 1;
    },

    /**
     * Replaces the secret that the keyed rotation `rotationClaimId` set and nobody was shown,
     * leaving the secret it replaced, and that one's grace, as the rotation left them. False when
     * the client is gone or was rotated since.
     */
    async replaceUnseenSecretHash(
      clientId: string,
      rotationClaimId: string,
      unseenHash: string,
      secretHash: string,
      owed?: OwedEntry,
    ): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne(
        { ...live(clientId), secretHash: unseenHash, secretRotationClaimId: rotationClaimId },
        { $set: { secretHash }, ...owing(owed) },
      );
      return result.matchedCount === 1;
    },

    /** Redirect URIs and web origins of every public client (the candidates for browser origins). */
    async listPublicClientLocations(): Promise<Pick<Client, 'isPublic' | 'redirectUris' | 'webOrigins'>[]> {
      const Clients = await model(connection);
      const rows = await Clients.find({ isPublic: true, ...notDeleted }, { _id: 0, isPublic: 1, redirectUris: 1, webOrigins: 1 }).lean<
        Pick<ClientWithSecret, 'isPublic' | 'redirectUris' | 'webOrigins'>[]
      >();
      return rows.map((row) => ({ isPublic: row.isPublic, redirectUris: row.redirectUris ?? [], webOrigins: row.webOrigins ?? [] }));
    },

    /** The entries client changes owe the record, in the client's enterprise. */
    owedActivity: createOwingCollection<ClientKey>({
      name: 'clients',
      model: () => model(connection) as never,
      filter: (key) => clientFilter(key),
      keyFields: ['clientId', 'enterpriseId'],
      keyOf: (doc) => clientFilter(doc as ClientKey),
      subject: (key) => clientFilter(key),
    }),
  };
  return repository;
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
