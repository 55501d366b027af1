// Who takes part in the instant-notification benchmark: an enterprise (a confidential client with
// scope `notifications` and a token from the real token endpoint) and N users of the approver app,
// each with a user access token stored as the authorization server stores the ones it issues.
// The sign-in that issues such tokens has its own benchmark (bench/tokens).
import { randomBytes, randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { createOidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import { registerBenchClient } from '../support/bench-clients.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { accountIdOf } from '../../core/sign-in/sign-in-users.js';

/** A client_credentials token with scope `notifications`, from the API's token endpoint. */
export async function enterpriseToken(apiUrl: string, mongo: Connection): Promise<string> {
  const { client, clientSecret } = await registerBenchClient(mongo, {
    name: 'bench enterprise',
    scopes: ['notifications'],
    allowedIps: ['127.0.0.1/32', '::1/128'],
  });
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(clientSecret ?? '')}`).toString('base64');
  const res = await fetch(`${apiUrl}/svc/authserver/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'notifications' }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** User access tokens (one hour) of the approver app, a public client, for each of `userIds`. */
export async function userTokens(mongo: Connection, userIds: string[]): Promise<string[]> {
  const { client } = await registerBenchClient(mongo, {
    name: 'bench approver app',
    scopes: ['notifications'],
    public: true,
    redirectUris: ['http://127.0.0.1/cb'],
  });
  const now = Math.floor(Date.now() / 1000);
  const exp = now + 3600;
  const tokens: string[] = [];
  for (const userId of userIds) {
    const token = randomBytes(32).toString('base64url');
    const accountId = accountIdOf({ enterpriseId: DEFAULT_ENTERPRISE_ID, userId });
    await createOidcRecordsRepository(mongo).upsertOidcRecord({
      kind: 'AccessToken',
      key: token,
      grantId: randomUUID(),
      accountId,
      payload: {
        kind: 'AccessToken',
        jti: token,
        accountId,
        clientId: client.clientId,
        scope: 'openid notifications',
        gty: 'authorization_code',
        iat: now,
        exp,
      },
      expiresAt: new Date(exp * 1000),
    });
    tokens.push(token);
  }
  return tokens;
}
