import { registerClient } from '../../core/clients/clients.service.js';
import type { ClientScope } from '../../core/clients/clients.repository.js';
import type { TestService } from './test-service.js';
import { sendJson } from './users-helpers.js';

export interface ClientWithToken {
  clientId: string;
  clientSecret: string;
  accessToken: string;
}

/** Calls the token endpoint with the client_credentials grant and HTTP Basic client auth. */
export async function requestToken(
  service: Pick<TestService, 'url'>,
  credentials: { clientId: string; clientSecret: string },
  form: Record<string, string> = { grant_type: 'client_credentials' },
): Promise<Response> {
  const basic = Buffer.from(`${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`).toString(
    'base64',
  );
  return fetch(`${service.url}/svc/authserver/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

/**
 * Creates a client through the admin API, as an operator would (so it gets its callback secret), allowed from loopback,
 * and gets it an access token from the real token endpoint.
 */
export async function createClientThroughAdminApi(
  service: Pick<TestService, 'url' | 'config'>,
  options: { name: string; scopes: ClientScope[]; enterpriseId?: string },
): Promise<ClientWithToken & { callbackSecret: string }> {
  const res = await sendJson(`${service.url}/admin/clients`, 'POST', service.config.adminToken, {
    ...options,
    allowedIps: ['127.0.0.1', '::1'],
  });
  expect(res.status).toBe(201);
  const created = (await res.json()) as { client_id: string; client_secret: string; callback_secret: string };
  const token = await requestToken(service, { clientId: created.client_id, clientSecret: created.client_secret });
  const { access_token: accessToken } = (await token.json()) as { access_token: string };
  return { clientId: created.client_id, clientSecret: created.client_secret, callbackSecret: created.callback_secret, accessToken };
}

/**
 * Registers a confidential client with these scopes (and allow-list, default loopback IPv4 and
 * IPv6) and gets it an access token from the real token endpoint.
 */
export async function createClientWithToken(
  service: Pick<TestService, 'url' | 'services'>,
  options: { scopes: ClientScope[]; allowedIps?: string[]; name?: string; enterpriseId?: string; test?: boolean },
): Promise<ClientWithToken> {
  const { client, clientSecret } = await registerClient(service.services.clients, {
    name: options.name ?? 'test client',
    ...(options.enterpriseId === undefined ? {} : { enterpriseId: options.enterpriseId }),
    ...(options.test === undefined ? {} : { test: options.test }),
    scopes: options.scopes,
    allowedIps: options.allowedIps ?? ['127.0.0.1/32', '::1/128'],
  });
  if (!clientSecret) throw new Error('confidential client expected');
  const res = await requestToken(service, { clientId: client.clientId, clientSecret });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return { clientId: client.clientId, clientSecret, accessToken: body.access_token };
}
