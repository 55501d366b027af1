import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Connection } from 'mongoose';
import { findClientWithSecret, type ClientWithSecret } from '../../core/clients/clients.repository.js';
import {
  consumeOidcRecord,
  deleteOidcRecord,
  deleteOidcRecordsOfGrant,
  findOidcRecord,
  upsertOidcRecord,
} from '../../core/auth/oidc-records.repository.js';

/**
 * Client metadata as oidc-provider reads it. `client_secret` carries the stored HMAC form, never
 * the secret: auth-server.ts replaces the provider's secret comparison with verifyClientSecret.
 */
export function toClientMetadata(client: ClientWithSecret): AdapterPayload {
  const hasRedirects = client.redirectUris.length > 0;
  const grantTypes = client.isPublic ? ['authorization_code'] : hasRedirects ? ['client_credentials', 'authorization_code'] : ['client_credentials'];
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.isPublic ? { token_endpoint_auth_method: 'none' } : { token_endpoint_auth_method: 'client_secret_basic', client_secret: client.secretHash ?? '' }),
    grant_types: grantTypes,
    response_types: hasRedirects ? ['code'] : [],
    redirect_uris: client.redirectUris,
    // `openid` always: the authorization-code login (a later issue) needs it, and an empty
    // scope is invalid metadata. client_credentials never grants it (token-scope.policy.ts).
    scope: ['openid', ...client.scopes].join(' '),
  };
}

/** oidc-provider's storage contract over MongoDB; clients come from our clients repository. */
export function createOidcAdapter(connection: Connection): new (name: string) => Adapter {
  return class MongoOidcAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await upsertOidcRecord(connection, {
        kind: this.kind,
        key: id,
        payload: payload as Record<string, unknown>,
        ...(payload.grantId ? { grantId: payload.grantId } : {}),
        ...(payload.userCode ? { userCode: payload.userCode } : {}),
        ...(payload.uid ? { uid: payload.uid } : {}),
        ...(expiresIn ? { expiresAt: new Date(Date.now() + expiresIn * 1000) } : {}),
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.kind === 'Client') {
        const client = await findClientWithSecret(connection, id);
        return client ? toClientMetadata(client) : undefined;
      }
      return (await findOidcRecord(connection, this.kind, { key: id })) as AdapterPayload | undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return (await findOidcRecord(connection, this.kind, { userCode })) as AdapterPayload | undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return (await findOidcRecord(connection, this.kind, { uid })) as AdapterPayload | undefined;
    }

    async consume(id: string): Promise<void> {
      await consumeOidcRecord(connection, this.kind, id);
    }

    async destroy(id: string): Promise<void> {
      await deleteOidcRecord(connection, this.kind, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteOidcRecordsOfGrant(connection, grantId);
    }
  };
}
