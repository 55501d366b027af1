import { registerClient, type RegisterClientInput } from '../../core/clients/clients.service.js';
import type { TestService } from './test-service.js';

/** A registered app as the tests drive it by hand: its id, secret (confidential) and redirect URI. */
export interface TestApp {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

/** Where the tests' apps are sent back to: nothing listens there, the tests read the redirect themselves. */
export const TEST_APP_REDIRECT_URI = 'http://127.0.0.1:9/callback';

/**
 * Registers a confidential app with no API scopes that redirects to TEST_APP_REDIRECT_URI (and to `moreRedirectUris`), as
 * the tests drive it.
 */
export async function registerTestApp(
  service: Pick<TestService, 'services'>,
  input: Pick<RegisterClientInput, 'name' | 'enterpriseId'> & { moreRedirectUris?: string[] },
): Promise<TestApp> {
  const { moreRedirectUris = [], ...named } = input;
  const { client, clientSecret } = await registerClient(service.services.clients, {
    ...named,
    scopes: [],
    redirectUris: [TEST_APP_REDIRECT_URI, ...moreRedirectUris],
  });
  return { clientId: client.clientId, clientSecret: clientSecret as string, redirectUri: TEST_APP_REDIRECT_URI };
}

/** The authorization URL of a code request (no PKCE: confidential apps here; add it with `extra`). */
export function authorizeUrl(service: Pick<TestService, 'url'>, app: TestApp, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    response_type: 'code',
    scope: 'openid notifications',
    state: 'st-1',
    ...extra,
  });
  return `${service.url}/svc/authserver/oauth/authorize?${params.toString()}`;
}

/** A form post to the token endpoint, with HTTP Basic for confidential apps and client_id alone for public ones. */
export async function postToAuthServer(
  service: Pick<TestService, 'url'>,
  path: string,
  app: Pick<TestApp, 'clientId' | 'clientSecret'>,
  form: Record<string, string>,
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (app.clientSecret !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}`;
  } else {
    body.set('client_id', app.clientId);
  }
  return fetch(`${service.url}/svc/authserver${path}`, { method: 'POST', headers, body: body.toString() });
}

/** Exchanges the code in an app callback URL for tokens (the whole token response). */
export async function exchangeCode(service: Pick<TestService, 'url'>, app: TestApp, callback: string): Promise<Record<string, string>> {
  const code = new URL(callback).searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback}`);
  const res = await postToAuthServer(service, '/oauth/token', app, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: app.redirectUri,
  });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 200) throw new Error(`code exchange failed: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** GET /v1/me with a user's access token. */
export function readMe(service: Pick<TestService, 'url'>, accessToken: string): Promise<Response> {
  return fetch(`${service.url}/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
}
