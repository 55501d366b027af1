// Sign-in for apps: the authorization code flow with PKCE against the service's authorization
// server, on oauth4webapi (a standards-checked OAuth 2.0 / OpenID Connect client for any runtime).
import * as oauth from 'oauth4webapi';
import { invalidArgument, SvcIdentityError, type OperationName } from './errors.js';
import { signInError } from './sign-in-errors.js';
import { checkTimeout, timeoutSignal } from './timeout.js';

export interface SignInOptions {
  /** Base URL of the service, e.g. https://id.example.com (the issuer is `<serviceUrl>/svc/authserver`). */
  serviceUrl: string;
  /** The app's registered client id (a public client: no secret lives in an app). */
  clientId: string;
  /** Exactly one of the client's registered redirect URIs. */
  redirectUri: string;
  /** Scopes asked for; `notifications` is what the notification operations need. */
  scope?: string;
  /** Allow http:// service URLs (local runs only). */
  allowInsecureHttp?: boolean;
  /** How long each request may wait for an answer before it fails as `network` (default 30000). */
  timeoutMs?: number;
}

/** What the app keeps between starting the sign-in and handling the redirect (e.g. sessionStorage). */
export interface PendingSignIn {
  state: string;
  codeVerifier: string;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  scope?: string;
  /** Epoch milliseconds after which the access token should be refreshed. */
  expiresAt: number;
}

/** What signing out did; the app sends the browser to `endSessionUrl` when there is one. */
export interface SignOutResult {
  /** The authorization server's logout page (RP-initiated logout), which ends its browser session. */
  endSessionUrl?: string;
  /** Tokens the server did not confirm revoked (the app forgets them anyway). */
  notRevoked: ('refresh_token' | 'access_token')[];
}

const DEFAULT_SCOPE = 'openid offline_access notifications';

type RequestOptions = { [oauth.allowInsecureRequests]?: boolean; signal: AbortSignal };

export class SignIn {
  private server: oauth.AuthorizationServer | undefined;
  private readonly client: oauth.Client;
  private readonly insecure: { [oauth.allowInsecureRequests]?: boolean };
  private readonly timeoutMs: number;

  constructor(private readonly options: SignInOptions) {
    this.client = { client_id: options.clientId };
    this.insecure = options.allowInsecureHttp ? { [oauth.allowInsecureRequests]: true } : {};
    this.timeoutMs = checkTimeout(options.timeoutMs);
  }

  /**
   * Runs one step with a time limit on its requests; every failure leaves as an SvcIdentityError
   * (see sign-in-errors.ts for which kind).
   */
  private async step<T>(operation: OperationName, run: (requestOptions: RequestOptions) => Promise<T>): Promise<T> {
    const timeout = timeoutSignal(this.timeoutMs);
    try {
      return await run({ ...this.insecure, signal: timeout.signal });
    } catch (err) {
      throw signInError(operation, err, timeout.signal.aborted ? timeout.signal.reason : undefined);
    } finally {
      timeout.done();
    }
  }

  /** The authorization server's metadata, read once from its discovery document. */
  async discover(): Promise<oauth.AuthorizationServer> {
    if (!this.server) {
      this.server = await this.step('Discover', async (requestOptions) => {
        const issuer = new URL(`${this.options.serviceUrl.replace(/\/+$/, '')}/svc/authserver`);
        const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...requestOptions });
        return oauth.processDiscoveryResponse(issuer, response);
      });
    }
    return this.server;
  }

  /**
   * The URL to send the user to, and what to keep until the redirect comes back. `maxAge`
   * (seconds, OpenID Connect's `max_age`): the service asks who the user is again unless they
   * signed in that recently; pass the `maxAge` of a refusal that needs a recent sign-in
   * (`details.maxAge`, e.g. when adding a passkey). Without `openid` in the scope it becomes
   * `prompt=login`: a new sign-in whatever the age.
   */
  async start(options: { maxAge?: number } = {}): Promise<{ url: string; pending: PendingSignIn }> {
    const { maxAge } = options;
    if (maxAge !== undefined && !(Number.isInteger(maxAge) && maxAge >= 0))
      throw invalidArgument('StartSignIn', 'maxAge must be a whole number of seconds, 0 or more');
    const server = await this.discover();
    if (!server.authorization_endpoint)
      throw new SvcIdentityError({ operation: 'StartSignIn', kind: 'refused', message: 'the service has no authorization endpoint' });
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(server.authorization_endpoint);
    url.searchParams.set('client_id', this.options.clientId);
    url.searchParams.set('redirect_uri', this.options.redirectUri);
    url.searchParams.set('response_type', 'code');
    const scope = this.options.scope ?? DEFAULT_SCOPE;
    url.searchParams.set('scope', scope);
    const scopes = scope.split(' ');
    const prompts: string[] = [];
    // OpenID Connect grants offline_access (a refresh token) only with prompt=consent; the
    // service still shows no consent page to first-party apps.
    if (scopes.includes('offline_access')) prompts.push('consent');
    // max_age is OpenID Connect's: without openid the service refuses it, so such an app asks
    // for a new sign-in outright (prompt=login), which is at least as recent as any max_age.
    if (maxAge !== undefined && scopes.includes('openid')) url.searchParams.set('max_age', String(maxAge));
    else if (maxAge !== undefined) prompts.push('login');
    if (prompts.length > 0) url.searchParams.set('prompt', prompts.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { url: url.href, pending: { state, codeVerifier } };
  }

  /** Checks the redirect (state, issuer, error) and exchanges its code for tokens. */
  async finish(redirectedTo: string | URL, pending: PendingSignIn): Promise<TokenSet> {
    const server = await this.discover();
    return this.step('FinishSignIn', async (requestOptions) => {
      const parameters = oauth.validateAuthResponse(server, this.client, new URL(redirectedTo), pending.state);
      const response = await oauth.authorizationCodeGrantRequest(
        server,
        this.client,
        oauth.None(),
        parameters,
        this.options.redirectUri,
        pending.codeVerifier,
        requestOptions,
      );
      return toTokenSet(await oauth.processAuthorizationCodeResponse(server, this.client, response));
    });
  }

  /** New tokens from a refresh token; the service rotates refresh tokens, so keep the new one. */
  async refresh(refreshToken: string): Promise<TokenSet> {
    const server = await this.discover();
    return this.step('Refresh', async (requestOptions) => {
      const response = await oauth.refreshTokenGrantRequest(server, this.client, oauth.None(), refreshToken, requestOptions);
      return toTokenSet(await oauth.processRefreshTokenResponse(server, this.client, response));
    });
  }

  /**
   * Signs out: revokes the refresh token (which ends the grant, and with it every token issued
   * from it) and the access token, with the client id alone as public clients do (RFC 7009), and
   * gives the logout page's URL (OpenID Connect RP-Initiated Logout) that ends the sign-in
   * session, so the next sign-in asks who the person is. The app must forget the tokens and
   * navigate to `endSessionUrl`; a revocation the server refused is reported, never thrown,
   * so signing out always goes on.
   */
  async signOut(tokens: Partial<TokenSet>, options: { postLogoutRedirectUri?: string } = {}): Promise<SignOutResult> {
    const server = await this.discover();
    const notRevoked: SignOutResult['notRevoked'] = [];
    const revoke = async (token: string | undefined, hint: 'refresh_token' | 'access_token') => {
      if (!token) return;
      const timeout = timeoutSignal(this.timeoutMs);
      try {
        const response = await oauth.revocationRequest(server, this.client, oauth.None(), token, {
          ...this.insecure,
          signal: timeout.signal,
          additionalParameters: { token_type_hint: hint },
        });
        await oauth.processRevocationResponse(response);
      } catch {
        notRevoked.push(hint);
      } finally {
        timeout.done();
      }
    };
    // The refresh token first: once its grant is gone, a stolen copy of either token is useless.
    await revoke(tokens.refreshToken, 'refresh_token');
    await revoke(tokens.accessToken, 'access_token');
    if (!server.end_session_endpoint) return { notRevoked };
    const url = new URL(server.end_session_endpoint);
    url.searchParams.set('client_id', this.options.clientId);
    if (tokens.idToken) url.searchParams.set('id_token_hint', tokens.idToken);
    if (options.postLogoutRedirectUri) url.searchParams.set('post_logout_redirect_uri', options.postLogoutRedirectUri);
    return { endSessionUrl: url.href, notRevoked };
  }

  /**
   * A `getAccessToken` for NotificationClient that refreshes the tokens when they are about to
   * expire, and hands every new token set to `onTokens` so the app can store it.
   */
  accessTokenProvider(initial: TokenSet, onTokens: (tokens: TokenSet) => void = () => undefined): () => Promise<string> {
    let current = initial;
    let refreshing: Promise<TokenSet> | undefined;
    return async () => {
      if (current.expiresAt - Date.now() > 30_000 || !current.refreshToken) return current.accessToken;
      refreshing ??= this.refresh(current.refreshToken).finally(() => (refreshing = undefined));
      current = await refreshing;
      onTokens(current);
      return current.accessToken;
    };
  }
}

function toTokenSet(response: oauth.TokenEndpointResponse): TokenSet {
  return {
    accessToken: response.access_token,
    ...(response.refresh_token ? { refreshToken: response.refresh_token } : {}),
    ...(response.id_token ? { idToken: response.id_token } : {}),
    ...(response.scope ? { scope: response.scope } : {}),
    expiresAt: Date.now() + (response.expires_in ?? 300) * 1000,
  };
}
