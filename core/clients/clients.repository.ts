import { Schema, type Connection } from 'mongoose';
import { modelFor } from '../platform/db/model-registry.js';

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
}

export const clientSchema = new Schema<ClientWithSecret>(
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
    createdAt: { type: Date, required: true },
  },
  { collection: 'clients', versionKey: false },
);

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

const PROJECTION = { _id: 0 } as const;

export type UpdatableClientFields = Partial<
  Pick<Client, 'name' | 'scopes' | 'allowedIps' | 'redirectUris' | 'webOrigins' | 'test' | 'testCodes'>
>;

export function createClientsRepository(connection: Connection) {
  const repository = {
    async insertClient(client: ClientWithSecret): Promise<Client> {
      const Clients = await model(connection);
      await Clients.create(client);
      return withoutSecret(client);
    },

    async findClient(clientId: string): Promise<Client | null> {
      const found = await repository.findClientWithSecret(clientId);
      return found && withoutSecret(found);
    },

    async findClientWithSecret(clientId: string): Promise<ClientWithSecret | null> {
      const Clients = await model(connection);
      return Clients.findOne({ clientId }, PROJECTION).lean<ClientWithSecret>();
    },

    async listClients(): Promise<Client[]> {
      const Clients = await model(connection);
      const rows = await Clients.find({}, PROJECTION).sort({ createdAt: 1, clientId: 1 }).lean<ClientWithSecret[]>();
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
          ? {}
          : { $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, clientId: { $gt: after.clientId } }] };
      const rows = await Clients.find(filter, PROJECTION).sort({ createdAt: 1, clientId: 1 }).limit(limit).lean<ClientWithSecret[]>();
      return rows.map(withoutSecret);
    },

    /** True when a client was deleted. */
    async deleteClient(clientId: string): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.deleteOne({ clientId });
      return result.deletedCount === 1;
    },

    /** The encrypted callback secret, or null when the client has none (or does not exist). */
    async findCallbackSecretEncrypted(clientId: string): Promise<string | null> {
      const Clients = await model(connection);
      const row = await Clients.findOne({ clientId }, { _id: 0, callbackSecretEncrypted: 1 }).lean<{
        callbackSecretEncrypted?: string | null;
      }>();
      return row?.callbackSecretEncrypted ?? null;
    },

    /** Replaces the client's callback secret; false when the client does not exist. */
    async setCallbackSecretEncrypted(clientId: string, encrypted: string): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne({ clientId }, { $set: { callbackSecretEncrypted: encrypted } });
      return result.matchedCount === 1;
    },

    /** Replaces the client's redirect URIs; false when the client does not exist. */
    async setRedirectUris(clientId: string, redirectUris: string[]): Promise<boolean> {
      return repository.updateClientFields(clientId, { redirectUris });
    },

    /** Replaces the given fields of a client; false when the client does not exist. */
    /**
     * Sets the fields; with `whileTest`, only while the client's test flag is still that value
     * (fixed codes decided on the flag as read). False when the client is gone or its flag changed.
     */
    async updateClientFields(clientId: string, fields: UpdatableClientFields, whileTest?: boolean): Promise<boolean> {
      const Clients = await model(connection);
      const filter = whileTest === undefined ? { clientId } : { clientId, test: whileTest ? true : { $ne: true } };
      const result = await Clients.updateOne(filter, { $set: fields });
      return result.matchedCount === 1;
    },

    /**
     * Puts `secretHash` in place of the current secret only if the current one is still `currentHash`
     * (two rotations at once: one wins); the replaced hash stays accepted until `previousExpiresAt`,
     * or is dropped at once when that is null. False when the client is gone or was rotated meanwhile.
     */
    async replaceSecretHash(clientId: string, currentHash: string, secretHash: string, previousExpiresAt: Date | null): Promise<boolean> {
      const Clients = await model(connection);
      const result = await Clients.updateOne(
        { clientId, secretHash: currentHash },
        {
          $set: {
            secretHash,
            previousSecretHash: previousExpiresAt === null ? null : currentHash,
            previousSecretExpiresAt: previousExpiresAt,
          },
        },
      );
      return result.matchedCount === 1;
    },

    /** Redirect URIs and web origins of every public client (the candidates for browser origins). */
    async listPublicClientLocations(): Promise<Pick<Client, 'isPublic' | 'redirectUris' | 'webOrigins'>[]> {
      const Clients = await model(connection);
      const rows = await Clients.find({ isPublic: true }, { _id: 0, isPublic: 1, redirectUris: 1, webOrigins: 1 }).lean<
        Pick<ClientWithSecret, 'isPublic' | 'redirectUris' | 'webOrigins'>[]
      >();
      return rows.map((row) => ({ isPublic: row.isPublic, redirectUris: row.redirectUris ?? [], webOrigins: row.webOrigins ?? [] }));
    },
  };
  return repository;
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
