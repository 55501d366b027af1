// A user access token for fuzzing /v1/me*, obtained the way a person gets one: an app (public
// client) starts the authorization code flow with PKCE, the person signs in through the login
// pages (user id, then the code sent to them, read here from the outbox), and the app exchanges
// the code at the token endpoint. Nothing is written to the stores directly.
import { createHash, randomBytes } from 'node:crypto';
import { PageWalker, type WalkedPage } from '../support/page-walker.js';

const REDIRECT_URI = 'http://127.0.0.1/fuzz/callback';
const USER_ID = 'fuzz-person';
const EMAIL = 'fuzz-person@example.com';

/** The login pages as a browser without JavaScript walks them. */
class LoginPages extends PageWalker {
  async page(url: string, form?: Record<string, string>): Promise<WalkedPage> {
    const answer = await this.visit(url, form);
    if ('leftTo' in answer) throw new Error(`sign-in: expected a page, was sent to ${answer.leftTo}`);
    return answer;
  }
}

function csrfOf(page: WalkedPage): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page.html);
  if (!match?.[1]) throw new Error(`sign-in: no form on ${page.url} (${page.status}): ${page.html.slice(0, 300)}`);
  return match[1];
}

async function send(url: string, init: { method?: string; bearer?: string; json?: unknown }): Promise<Response> {
  return fetch(url, {
    method: init.method ?? 'POST',
    headers: {
      ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

async function expectStatus(res: Response, status: number, what: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The newest sign-in code the outbox holds for the person (the dispatch worker writes it). */
async function loginCode(baseUrl: string, adminToken: string, since: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const res = await send(`${baseUrl}/admin/outbox?to=${encodeURIComponent(EMAIL)}&limit=100`, { method: 'GET', bearer: adminToken });
    const messages = (await res.json()) as { text: string; createdAt: string }[];
    const code = messages
      .filter((m) => Date.parse(m.createdAt) >= since && /sign-in code/.test(m.text))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((m) => /\b(\d{6})\b/.exec(m.text)?.[1])
      .pop();
    if (code) return code;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('sign-in: no code reached the outbox within 20 s');
}

export interface SignedInPerson {
  accessToken: string;
  /** Two of the person's pending notifications: one plain, one with number matching. */
  plainNotification: string;
  numberMatchNotification: string;
}

/**
 * Enrolls and activates a person (enterprise and public API), registers an app for them (admin
 * API), signs them in through the pages and returns their access token, with two pending
 * notifications of theirs for the fuzzer to answer and dismiss.
 */
export async function userTokenThroughLoginPages(
  baseUrl: string,
  adminToken: string,
  enterpriseToken: string,
  group: string,
): Promise<SignedInPerson> {
  const activationCode = randomBytes(12).toString('base64url');
  await expectStatus(
    await send(`${baseUrl}/v1/users`, {
      bearer: enterpriseToken,
      json: { userId: USER_ID, primaryGroup: group, firstName: 'Fuzz', lastName: 'Person', emailId: EMAIL, predefinedCode: activationCode },
    }),
    201,
    'enroll',
  );
  await expectStatus(await send(`${baseUrl}/v1/users/activate`, { json: { userId: USER_ID, activationCode } }), 200, 'activate');
  const app = await expectStatus(
    await send(`${baseUrl}/admin/clients`, {
      bearer: adminToken,
      json: { name: 'fuzz app', scopes: [], public: true, redirectUris: [REDIRECT_URI] },
    }),
    201,
    'register the app',
  );
  const clientId = String(app.client_id);

  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL(`${baseUrl}/svc/authserver/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'openid notifications',
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    authorize.searchParams.set(k, v);

  const pages = new LoginPages(baseUrl);
  const userStep = await pages.page(authorize.toString());
  const since = Date.now();
  const codeStep = await pages.page(userStep.url, { csrf: csrfOf(userStep), step: 'user', userId: USER_ID });
  const done = await pages.visit(codeStep.url, { csrf: csrfOf(codeStep), step: 'code', otp: await loginCode(baseUrl, adminToken, since) });
  if (!('leftTo' in done)) throw new Error(`sign-in did not finish: ${done.status} ${done.html.slice(0, 300)}`);
  const back = new URL(done.leftTo);
  if (back.searchParams.get('state') !== state || !back.searchParams.get('code'))
    throw new Error(`sign-in: unexpected redirect ${done.leftTo}`);

  const tokenRes = await fetch(`${baseUrl}/svc/authserver/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    }).toString(),
  });
  const tokens = await expectStatus(tokenRes, 200, 'token');

  const notifications: string[] = [];
  for (const numberMatch of [false, true]) {
    const created = await expectStatus(
      await send(`${baseUrl}/v1/notifications`, {
        bearer: enterpriseToken,
        json: {
          userId: USER_ID,
          body: [{ lng: 'English', subject: 'Sign-in request', message: 'Approve the sign-in?' }],
          actions: [
            { label: 'Approve', action: 'accept', authlevel: 1 },
            { label: 'Reject', action: 'reject', authlevel: 1 },
          ],
          numberMatch,
          expiresIn: 86400,
        },
      }),
      201,
      'notification',
    );
    notifications.push(String(created.notification_uuid));
  }
  return {
    accessToken: String(tokens.access_token),
    plainNotification: notifications[0] as string,
    numberMatchNotification: notifications[1] as string,
  };
}
