import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import type { StoredSecrets } from '../../core/clients/client-secret-rotation.js';
import type { ClientWithSecret } from '../../core/clients/clients.repository.js';
import { isNativeApp } from '../../core/clients/redirect-uris.js';
import { webOriginsOf } from '../../core/clients/web-origins.js';
import { GRANT_ISSUED_KINDS, type OidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { USER_TOKEN_SCOPES } from './user-token-scopes.js';

/** Our client fields carried in the provider's client metadata (kept under these names on its Client). */
export const EXTRA_CLIENT_METADATA = [
  'first_party',
  'api_scopes',
  'enterprise_id',
  'web_origins',
  'previous_secret_hash',
  'previous_secret_expires_at',
] as const;

/** The enterprise API scopes registered for the client (client_credentials grants these only). */
export function apiScopesOf(client: object): string[] {
  const { api_scopes: apiScopes } = client as { api_scopes?: unknown };
  return Array.isArray(apiScopes) ? apiScopes.filter((s): s is string => typeof s === 'string') : [];
}

/** The enterprise whose users sign in to the client. */
export function enterpriseOfClient(client: object): string {
  const { enterprise_id: enterpriseId } = client as { enterprise_id?: unknown };
  return typeof enterpriseId === 'string' ? enterpriseId : DEFAULT_ENTERPRISE_ID;
}

/** The browser origins allowed to call for the client (core/clients/web-origins.ts), none for confidential clients. */
export function webOriginsOfClient(client: object): string[] {
  const { web_origins: origins } = client as { web_origins?: unknown };
  return Array.isArray(origins) ? origins.filter((o): o is string => typeof o === 'string') : [];
}

/** The client's stored secret forms as the provider's Client carries them (see toClientMetadata). */
export function storedSecretsOfClient(client: object): StoredSecrets {
  const {
    clientSecret,
    previous_secret_hash: previousHash,
    previous_secret_expires_at: previousExpiresAt,
  } = client as { clientSecret?: unknown; previous_secret_hash?: unknown; previous_secret_expires_at?: unknown };
  return {
    secretHash: typeof clientSecret === 'string' && clientSecret !== '' ? clientSecret : null,
    previousSecretHash: typeof previousHash === 'string' ? previousHash : null,
    previousSecretExpiresAt: typeof previousExpiresAt === 'number' ? new Date(previousExpiresAt) : null,
  };
}

export function isFirstParty(client: object): boolean {
  return (client as { first_party?: unknown }).first_party !== false;
}

/**
 * Client metadata as oidc-provider reads it. `client_secret` carries the stored HMAC form, never
 * the secret (and `previous_secret_hash` the replaced one during its grace period): auth-server.ts
 * replaces the provider's secret comparison with acceptsClientSecret.
 * Clients with redirect URIs sign users in (authorization code, refresh tokens, the user
 * scopes); confidential ones also keep client_credentials for their enterprise scopes.
 */
export function toClientMetadata(client: ClientWithSecret): AdapterPayload {
  const signsUsersIn = client.redirectUris.length > 0;
  const grantTypes = [...(client.isPublic ? [] : ['client_credentials']), ...(signsUsersIn ? ['authorization_code', 'refresh_token'] : [])];
  const scopes = new Set(['openid', ...(signsUsersIn ? ['offline_access', ...USER_TOKEN_SCOPES] : []), ...client.scopes]);
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.isPublic
      ? { token_endpoint_auth_method: 'none' }
      : { token_endpoint_auth_method: 'client_secret_basic', client_secret: client.secretHash ?? '', ...previousSecretMetadata(client) }),
    grant_types: grantTypes,
    response_types: signsUsersIn ? ['code'] : [],
    redirect_uris: client.redirectUris,
    // Native apps (RFC 8252): private-use schemes, and loopback redirect URIs on any port.
    application_type: isNativeApp(client) ? 'native' : 'web',
    // Where sign-out may return: the app's own registered redirect URIs, matched exactly.
    post_logout_redirect_uris: client.redirectUris,
    // `openid` always, since an empty scope is invalid metadata; client_credentials never grants
    // it (token-scope.policy.ts only grants api_scopes).
    scope: [...scopes].join(' '),
    first_party: client.firstParty !== false,
    api_scopes: client.scopes,
    enterprise_id: client.enterpriseId,
    web_origins: webOriginsOf(client),
  };
}

/** The secret replaced by a rotation, while it is still accepted (core/clients/client-secret-rotation.ts). */
function previousSecretMetadata(client: ClientWithSecret): AdapterPayload {
  const { previousSecretHash: hash, previousSecretExpiresAt: expiresAt } = client;
  if (!hash || !(expiresAt instanceof Date)) return {};
  return { previous_secret_hash: hash, previous_secret_expires_at: expiresAt.getTime() };
}

/** oidc-provider's storage contract over MongoDB; clients come from our clients repository. */
export function createOidcAdapter(
  records: OidcRecordsRepository,
  clients: Pick<ClientLookup, 'clientWithSecret'>,
): new (name: string) => Adapter {
  // The client lookup hands out one object per client while it is cached, so its metadata is
  // built once per cached read, not on every token request (frozen: the provider only reads it).
  const metadata = new WeakMap<ClientWithSecret, AdapterPayload>();
  const metadataOf = (client: ClientWithSecret) => {
    let built = metadata.get(client);
    if (!built) metadata.set(client, (built = Object.freeze(toClientMetadata(client))));
    return built;
  };
  return class MongoOidcAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.kind === 'Session') forgetPersistsLogout(payload);
      await records.upsertOidcRecord({
        kind: this.kind,
        key: id,
        payload: payload as Record<string, unknown>,
        ...(payload.grantId && GRANT_ISSUED_KINDS.includes(this.kind) ? { grantId: payload.grantId } : {}),
        ...(payload.userCode ? { userCode: payload.userCode } : {}),
        ...(payload.uid ? { uid: payload.uid } : {}),
        ...(typeof payload.accountId === 'string' ? { accountId: payload.accountId } : {}),
        ...(expiresIn ? { expiresAt: new Date(Date.now() + expiresIn * 1000) } : {}),
      });
      if (this.kind === 'AccessToken' && typeof payload.grantId === 'string') await refuseIfGrantEnded(records, id, payload.grantId);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === 'Client') {
        const client = await clients.clientWithSecret(id);
        return client ? metadataOf(client) : undefined;
      }
      if (this.kind === 'AccessToken') {
        // A token of a blocked account is no token, for introspection and revocation too.
        const token = await records.findAccessTokenRecord(id);
        return token && !token.ended ? (token.payload as AdapterPayload) : undefined;
      }
      return (await records.findOidcRecord(this.kind, { key: id })) as AdapterPayload | undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return (await records.findOidcRecord(this.kind, { userCode })) as AdapterPayload | undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return (await records.findOidcRecord(this.kind, { uid })) as AdapterPayload | undefined;
    }

    /**
     * Marks a code or refresh token used only if nobody did before. The provider checks
     * `consumed` after reading, so two concurrent redemptions could both pass that check; the
     * conditional write lets exactly one through, and the loser is treated as a replay: the
     * grant and every token issued from it are revoked (RFC 6749 4.1.2). The grant goes first: the
     * winner may still be writing its token, and a token written after this finds no grant
     * (refuseIfGrantEnded) while one written before is deleted with the grant's records.
     */
    async consume(id: string): Promise<void> {
      const grantId = await records.consumeOidcRecord(this.kind, id);
      if (grantId === true) return;
      if (typeof grantId === 'string') {
        await records.deleteOidcRecord('Grant', grantId);
        await records.deleteOidcRecordsOfGrant(grantId);
      }
      throw new errors.InvalidGrant(`${this.kind === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
    }

    async destroy(id: string): Promise<void> {
      await records.deleteOidcRecord(this.kind, id);
      // Once the grant is gone, a token of it written meanwhile finds no grant after its write
      // (see refuseIfGrantEnded); one written before this point is deleted here.
      if (this.kind === 'Grant') await records.deleteOidcRecordsOfGrant(id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await records.deleteOidcRecordsOfGrant(grantId);
    }
  };
}

/**
 * A user's access token is written after the provider checked its user and grant: a block, a
 * sign-out or a revocation may end the grant in between, and its clean-up would miss a token
 * written after it ran. So the token is written first, then its grant is looked for: a grant
 * still there means the token was written before the grant's end, whose clean-up deletes it
 * (revocation) or marks it ended (a block marks access tokens again after deleting the grant);
 * a grant already gone means the token is deleted here and the request refused.
 */
async function refuseIfGrantEnded(records: OidcRecordsRepository, tokenId: string, grantId: string): Promise<void> {
  if (await records.findOidcRecord('Grant', { key: grantId })) return;
  await records.deleteOidcRecord('AccessToken', tokenId);
  throw new errors.InvalidGrant('grant not found');
}

/**
 * The provider keeps a grant past sign-out when its app asked for offline_access. Signing out
 * here ends every grant of the session, refresh tokens included (a shared device must not keep
 * the last person's access), so the flag is never stored.
 */
function forgetPersistsLogout(session: AdapterPayload): void {
  const authorizations = (session as { authorizations?: Record<string, { persistsLogout?: boolean }> }).authorizations;
  for (const authorization of Object.values(authorizations ?? {})) delete authorization.persistsLogout;
}
