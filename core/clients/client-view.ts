import type { Client } from './clients.repository.js';

/** A client as the admin API and the admin CLI show it (schemas/http/admin-clients.client.json): no secret. */
export function toClientResponse(client: Client): Record<string, unknown> {
  return {
    client_id: client.clientId,
    enterpriseId: client.enterpriseId,
    name: client.name,
    scopes: client.scopes,
    allowedIps: client.allowedIps,
    redirectUris: client.redirectUris,
    webOrigins: client.webOrigins,
    public: client.isPublic,
    firstParty: client.firstParty,
    test: client.test === true,
    testCodes: client.testCodes ?? [],
    hasCallbackSecret: client.hasCallbackSecret === true,
    createdAt: client.createdAt.toISOString(),
  };
}
