import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestApp {
  url: string;
  redirectUri: string;
  /** What the last callback received and got from the token endpoint. */
  last: { query?: Record<string, string>; tokens?: Record<string, unknown>; me?: Record<string, unknown> };
  /** The registered client the app signs in with (registered once the app's port is known). */
  useClient: (client: { clientId: string; clientSecret?: string }) => void;
  close: () => Promise<void>;
}

const escape = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A small relying party on its own port, as a real app would be: /login starts the
 * authorization code flow with state and PKCE (passing on its own `prompt` and `ui_locales`); /callback exchanges the code at the token
 * endpoint (HTTP Basic), reads /v1/me with the user's token and shows who signed in.
 */
export async function startTestApp(serviceUrl: string): Promise<TestApp> {
  let client: { clientId: string; clientSecret?: string } = { clientId: '' };
  const pending = new Map<string, string>();
  const last: TestApp['last'] = {};
  let redirectUri = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://app.local');
      const page = (status: number, title: string, body: string) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`,
        );
      };
      if (url.pathname === '/login') {
        const state = randomBytes(16).toString('base64url');
        const verifier = randomBytes(32).toString('base64url');
        pending.set(state, verifier);
        const authorize = new URL(`${serviceUrl}/svc/authserver/oauth/authorize`);
        authorize.search = new URLSearchParams({
          client_id: client.clientId,
          response_type: 'code',
          scope: url.searchParams.get('scope') ?? 'openid notifications',
          redirect_uri: redirectUri,
          state,
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
          ...(url.searchParams.get('prompt') ? { prompt: url.searchParams.get('prompt') as string } : {}),
          ...(url.searchParams.get('ui_locales') ? { ui_locales: url.searchParams.get('ui_locales') as string } : {}),
        }).toString();
        res.writeHead(302, { location: authorize.toString() });
        res.end();
        return;
      }
      if (url.pathname === '/callback') {
        last.query = Object.fromEntries(url.searchParams);
        last.tokens = undefined;
        last.me = undefined;
        const error = url.searchParams.get('error');
        if (error)
          return page(
            200,
            'Sign-in failed',
            `<p id="error">${escape(error)}</p><p>${escape(url.searchParams.get('error_description') ?? '')}</p>`,
          );
        const verifier = pending.get(url.searchParams.get('state') ?? '');
        if (!verifier) return page(400, 'Unknown state', '');
        pending.delete(url.searchParams.get('state') ?? '');
        const form = new URLSearchParams({
          grant_type: 'authorization_code',
          code: url.searchParams.get('code') ?? '',
          redirect_uri: redirectUri,
          code_verifier: verifier,
        });
        const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
        if (client.clientSecret)
          headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
        else form.set('client_id', client.clientId);
        const tokenRes = await fetch(`${serviceUrl}/svc/authserver/oauth/token`, { method: 'POST', headers, body: form.toString() });
        last.tokens = (await tokenRes.json()) as Record<string, unknown>;
        if (tokenRes.status !== 200) return page(502, 'Token exchange failed', `<pre>${escape(JSON.stringify(last.tokens))}</pre>`);
        const meRes = await fetch(`${serviceUrl}/v1/me`, { headers: { authorization: `Bearer ${String(last.tokens.access_token)}` } });
        last.me = (await meRes.json()) as Record<string, unknown>;
        return page(
          200,
          'Signed in',
          `<p>Signed in as <strong id="who">${escape(String(last.me.userId))}</strong> (${escape(String(last.me.firstName))} ${escape(String(last.me.lastName))}).</p><p>Scopes: <span id="scope">${escape(String(last.tokens.scope))}</span></p>`,
        );
      }
      page(404, 'Not found', '');
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  redirectUri = `${url}/callback`;
  return {
    url,
    redirectUri,
    last,
    useClient: (c) => {
      client = c;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
