import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { DEFAULT_ENTERPRISE_ID, ENTERPRISE_ID_RE } from '../platform/tenancy/enterprise-id.js';
import { ValidationError } from '../platform/errors/app-error.js';
import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
import { generateCallbackSecret, rotateCallbackSecret, sealCallbackSecret } from './callback-secret.js';
import { clientChangeEntry, recordClientChanges } from './client-activity.js';
import { generateClientSecret, hashClientSecret } from './client-secret.js';
import type { ClientStores } from './client-stores.js';
import type { Client, ClientScope, UpdatableClientFields, TestCode } from './clients.repository.js';
import { checkRedirectUris } from './redirect-uris.js';
import { normalizeWebOrigin } from './web-origins.js';

export interface RegisterClientInput {
  name: string;
  /** Default `default`: a deployment that never names an enterprise has that one only. */
  enterpriseId?: string;
  scopes: ClientScope[];
  allowedIps?: string[];
  redirectUris?: string[];
  /** Browser origins of a public client besides those of its https redirect URIs. */
  webOrigins?: string[];
  public?: boolean;
  /** Default true: the consent page is skipped for the operator's own apps. */
  firstParty?: boolean;
  /** Default false: a test client's messages go to the outbox with simulated receipts. */
  test?: boolean;
  /** Test clients only: fixed codes for named test users. */
  testCodes?: TestCode[];
}

export interface RegisteredClient {
  client: Client;
  /** Shown to the caller once; only its hash is stored. Absent for public clients. */
  clientSecret?: string;
  /** Signs notification callbacks; shown once, stored encrypted. Absent without an encryption key. */
  callbackSecret?: string;
}

/** `10.0.0.0/8` stays as is; a bare address becomes a one-address range (`/32`, `/128`). */
export function normalizeCidr(value: string): string {
  try {
    if (value.includes('/')) {
      const [range, bits] = ipaddr.parseCIDR(value);
      return `${range.toString()}/${bits}`;
    }
    const address = ipaddr.parse(value);
    return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    throw new ValidationError(`Invalid field allowedIps: '${value}' is not an IP address or CIDR range`);
  }
}

/**
 * Registers a client: random id, random secret stored hashed, CIDRs normalised, a callback secret
 * (sealed with the encryption key) for confidential clients; recorded in the activity record (done
 * by the operator: the admin API or CLI) with the caller's `comments`.
 */
export async function registerClient(
  stores: ClientStores,
  input: RegisterClientInput,
  options: { comments?: string; encryptionKey?: Buffer; clientId?: string } = {},
): Promise<RegisteredClient> {
  const { comments, encryptionKey } = options;
  const keys = { encryptionKey };
  const enterpriseId = input.enterpriseId ?? DEFAULT_ENTERPRISE_ID;
  if (!ENTERPRISE_ID_RE.test(enterpriseId)) throw new ValidationError('Invalid field enterpriseId: 1 to 64 of A-Z a-z 0-9 . _ @ -');
  const isPublic = input.public === true;
  const { redirectUris, webOrigins } = checkedLocations(isPublic, input.redirectUris ?? [], input.webOrigins ?? []);
  const clientSecret = isPublic ? undefined : generateClientSecret();
  // Given by an Idempotency-Key claim, so a retry finds the client its first request created.
  const clientId = options.clientId ?? randomUUID();
  const callbackSecret = isPublic || !keys.encryptionKey ? undefined : generateCallbackSecret();
  const test = input.test === true;
  const owed = clientChangeEntry('client.created', test ? ['test=true', comments].filter(Boolean).join('; ') : comments);
  const client = await stores.clients.insertClient(
    {
      clientId,
      enterpriseId,
      name: input.name,
      scopes: [...new Set(input.scopes)],
      allowedIps: [...new Set((input.allowedIps ?? []).map(normalizeCidr))],
      redirectUris,
      webOrigins,
      isPublic,
      firstParty: input.firstParty !== false,
      test,
      testCodes: checkedTestCodes(test, input.testCodes ?? []),
      secretHash: clientSecret === undefined ? null : hashClientSecret(clientSecret),
      callbackSecretEncrypted:
        callbackSecret === undefined || !keys.encryptionKey ? null : sealCallbackSecret(clientId, callbackSecret, keys.encryptionKey),
      createdAt: owed.at,
    },
    owed,
  );
  // A new public client may bring new web origins.
  stores.lookup.invalidate(clientId);
  await recordClientChanges(stores, client);
  return { client, ...(clientSecret === undefined ? {} : { clientSecret }), ...(callbackSecret === undefined ? {} : { callbackSecret }) };
}

/** Where a client's users come back to and which pages may call from a browser, checked as a whole. */
function checkedLocations(
  isPublic: boolean,
  redirectUris: string[],
  webOrigins: string[],
): { redirectUris: string[]; webOrigins: string[] } {
  const uris = [...new Set(redirectUris)];
  if (isPublic && uris.length === 0)
    throw new ValidationError('Invalid field redirectUris: a public client needs at least one redirect URI');
  checkRedirectUris(uris, isPublic);
  if (!isPublic && webOrigins.length > 0)
    throw new ValidationError('Invalid field webOrigins: only public clients have web origins (a client secret does not belong in a page)');
  return { redirectUris: uris, webOrigins: [...new Set(webOrigins.map(normalizeWebOrigin))] };
}

export interface UpdateClientInput {
  name?: string;
  scopes?: ClientScope[];
  allowedIps?: string[];
  redirectUris?: string[];
  webOrigins?: string[];
  test?: boolean;
  testCodes?: TestCode[];
}

/** Fixed codes only on a test client, one per user; clearing the flag drops them (see updateClient). */
function checkedTestCodes(test: boolean, testCodes: TestCode[]): TestCode[] {
  if (testCodes.length > 0 && !test)
    throw new ValidationError('Invalid field testCodes: only a test client (test: true) can have fixed codes');
  const users = testCodes.map((c) => c.userId);
  if (new Set(users).size !== users.length) throw new ValidationError('Invalid field testCodes: one code per userId');
  return testCodes.map(({ userId, code }) => ({ userId, code }));
}

/**
 * Replaces the fields given (name, scopes, allow-list, redirect URIs, web origins), each checked
 * by the same rules as at registration; takes effect in this process at once, in others within
 * the client cache window. A removed scope is refused on the client's existing tokens from then
 * on; an added one comes with the next token. Recorded as `client.updated`.
 */
export async function updateClient(
  stores: ClientStores,
  clientId: string,
  input: UpdateClientInput,
  comments?: string,
  attempt = 1,
): Promise<Client> {
  const client = await stores.clients.findClient(clientId);
  if (!client) throw new NotFoundError('Client not found');
  const checked = checkedLocations(client.isPublic, input.redirectUris ?? client.redirectUris, input.webOrigins ?? client.webOrigins);
  const fields: UpdatableClientFields = {
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(input.scopes === undefined ? {} : { scopes: [...new Set(input.scopes)] }),
    ...(input.allowedIps === undefined ? {} : { allowedIps: [...new Set(input.allowedIps.map(normalizeCidr))] }),
    ...(input.redirectUris === undefined ? {} : { redirectUris: checked.redirectUris }),
    ...(input.webOrigins === undefined ? {} : { webOrigins: checked.webOrigins }),
    ...(input.test === undefined ? {} : { test: input.test }),
    // A client taken out of test mode keeps no fixed codes; codes given for a non-test client are refused.
    ...(input.testCodes !== undefined
      ? { testCodes: checkedTestCodes(input.test ?? client.test === true, input.testCodes) }
      : input.test === false
        ? { testCodes: [] }
        : {}),
  };
  // Codes given without the flag were checked against the flag as read: written only while it
  // holds, so a request taking the client out of test mode meanwhile never leaves it with codes.
  // When it changed, the patch is decided again on what is stored now.
  const whileTest = input.testCodes !== undefined && input.test === undefined ? client.test === true : undefined;
  // The test flag decides whether messages reach people: its changes are named in the record.
  const noted = input.test === undefined ? comments : [`test=${input.test}`, comments].filter(Boolean).join('; ');
  if (!(await stores.clients.updateClientFields(clientId, fields, whileTest, clientChangeEntry('client.updated', noted)))) {
    if (whileTest === undefined) throw new NotFoundError('Client not found');
    if (attempt >= 3) throw new ConflictError('The client was changed by other requests at the same time; try again');
    return updateClient(stores, clientId, input, comments, attempt + 1);
  }
  stores.lookup.invalidate(clientId);
  await recordClientChanges(stores, client);
  return { ...client, ...fields };
}

/**
 * A new callback secret for a confidential client (stored sealed, returned once); the old one
 * stops signing at once. Recorded as `client.callback-secret-rotated`.
 */
export async function rotateClientCallbackSecret(
  stores: ClientStores,
  clientId: string,
  options: { encryptionKey: Buffer; comments?: string },
): Promise<string> {
  const client = await stores.clients.findClient(clientId);
  if (!client || client.isPublic) throw new NotFoundError('Client not found');
  const owed = clientChangeEntry('client.callback-secret-rotated', options.comments);
  const secret = await rotateCallbackSecret(stores.clients, clientId, options.encryptionKey, owed);
  if (secret === null) throw new NotFoundError('Client not found');
  await recordClientChanges(stores, client);
  return secret;
}

/**
 * Deletes a client (its tokens are refused from then on); NotFoundError when unknown. Recorded;
 * the client is gone for every lookup at once, its document once its entry is written.
 */
export async function removeClient(stores: ClientStores, clientId: string, comments?: string): Promise<void> {
  const client = await stores.clients.findClient(clientId);
  if (!client || !(await stores.clients.markClientDeleted(clientId, clientChangeEntry('client.deleted', comments))))
    throw new NotFoundError('Client not found');
  stores.lookup.invalidate(clientId);
  await recordClientChanges(stores, client);
}
