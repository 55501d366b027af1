import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { createEnterpriseTokenVerifier } from '../../core/auth/enterprise-token.verifier.js';
import type { RevocationChecks } from '../../core/auth/revocation-checks.js';
import type { OidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import type { RevokedTokensRepository } from '../../core/auth/revoked-tokens.repository.js';
import { ID_TOKEN_SIGNING_ALG, loadCookieKeys, type SigningKeys, type SigningKeysCache } from '../../core/auth/signing-key.service.js';
import type { VerificationKeySet } from '../../core/auth/verification-key-set.js';
import type { ClientAuthenticationLimits } from '../../core/clients/client-authentication-limits.js';
import { acceptsClientSecret } from '../../core/clients/client-secret-rotation.js';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import { CLIENT_SCOPES } from '../../core/clients/clients.repository.js';
import { isPlainHttpOffLoopback } from '../../core/clients/redirect-uris.js';
import { findUserForSignIn, userOfAccountId } from '../../core/sign-in/sign-in-users.js';
import { canSignIn } from '../../core/users/user-reachability.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { formActionSourceOf, renderMessagePage, renderPage } from './login-pages.js';
import { translate } from './page-catalogs.js';
import { tooManyRequestsPageData } from './login-responses.js';
import { describeOAuthError } from './oauth-error-message.js';
import { sessionLifetimeFromSignIn, sessionsEndingWithTheirLifetime } from './session-lifetime.js';
import { createSignOutAfterSessionEnd } from './sign-out-after-session-end.js';
import { chooseLocale } from '../../core/platform/locales/locale-negotiation.js';
import type { Locale } from '../../core/platform/locales/shipped-locales.js';
import type { CallerAddress } from '../caller-address.js';
import type { ServiceContext } from '../service-context.js';
import {
  apiScopesOf,
  createOidcAdapter,
  enterpriseOfClient,
  EXTRA_CLIENT_METADATA,
  isFirstParty,
  storedSecretsOfClient,
  webOriginsOfClient,
} from './oidc-adapter.js';
import { answerGrantTypeRefusalsAsUnauthorizedClient } from './grant-type-refusal.js';
import { adapterAnsweringStoreOutages, answerStoreOutages, answeringStoreOutages } from './store-outage.js';
import { reuseClientInstances } from './client-instances.js';
import { refuseRedirectUriRemovedSinceStart } from './redirect-uri-still-registered.js';
import { limitFailedClientAuthentication, type ClientAuthenticatingEndpoint } from './client-authentication-limit.js';
import { answerForEnterpriseTokens } from './enterprise-token-lifecycle.js';
import { answerMissingClientAuthentication } from './missing-client-authentication.js';
import { NodeSigningKey } from './node-signing-key.js';
import { applyClientCredentialsScopePolicy } from './token-scope.policy.js';
import { signInTimeClaims } from './user-token-sign-in-time.js';
import { USER_ACCESS_TOKEN_SCOPES } from './user-token-scopes.js';
import { scopeRequiredCheck } from './authorization-scope-required.js';
import { providerCookieNames } from './cookie-names.js';
import { createSignInStartLimit } from './sign-in-start-limit.js';
import type { SignInStartLimits } from '../../core/sign-in/sign-in-start-limits.js';
import { SHIPPED_LOCALES } from '../../core/platform/locales/shipped-locales.js';

export const AUTH_SERVER_PATH = '/svc/authserver';

/** The provider's endpoints, under AUTH_SERVER_PATH. */
export const AUTH_SERVER_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  jwks: '/jwks',
  introspection: '/oauth/introspect',
  revocation: '/oauth/revoke',
  end_session: '/session/end',
} as const;

/** The endpoints that authenticate clients, whose failures are limited. */
const CLIENT_AUTHENTICATING_ENDPOINTS = new Map<string, ClientAuthenticatingEndpoint>([
  [AUTH_SERVER_ROUTES.token, 'token'],
  [AUTH_SERVER_ROUTES.introspection, 'introspection'],
  [AUTH_SERVER_ROUTES.revocation, 'revocation'],
]);

/** Issuer and audience of our access tokens; the bearer middleware checks both. */
export function tokenIdentity(publicUrl: string): { issuer: string; audience: string } {
  return { issuer: `${publicUrl}${AUTH_SERVER_PATH}`, audience: `${publicUrl}/v1` };
}

/** What the authorization server works on, built once by the composition root. */
export interface AuthServerStores {
  users: UsersRepository;
  /** `recheckedClientWithSecret`: read when a presented secret does not match the cached client (a rotation elsewhere). */
  clientLookup: Pick<ClientLookup, 'clientWithSecret' | 'recheckedClientWithSecret'>;
  oidcRecords: OidcRecordsRepository;
  revokedTokens: RevokedTokensRepository;
  /** The process's signing keys, shared with the bearer check and the OTP JWT signer. */
  signingKeys: SigningKeysCache;
  /** The process's one verification key set, shared with the bearer check (and its reload budget with it). */
  verificationKeys: VerificationKeySet;
  /** The process's revocation checks, shared with the bearer check: a token revoked here is refused here at once. */
  revocations: RevocationChecks;
  /** Budgets of failed client authentication per (client, address) and per address. */
  clientAuthenticationLimits: ClientAuthenticationLimits;
  /** The budget of sign-ins started and sign-in pages loaded per address, shared with the pages. */
  signInStartLimits: SignInStartLimits;
}

/** What a provider is built with when the caller already holds it (each is read from the store otherwise). */
export interface AuthServerKeys {
  /** The signing keys: the first signs access tokens, the first RSA one ID tokens (the provider picks the first that fits). */
  signingKeys?: SigningKeys;
  /** The keys of the provider's cookies, which never change. */
  cookieKeys?: string[];
}

/**
 * Builds the oidc-provider instance: clients and grants in MongoDB, JWT enterprise tokens, opaque
 * user tokens, signed with the process's current signing keys unless `given`. `callerAddress` is
 * the app's (TRUST_PROXY), for the limits on failed client authentication.
 */
export async function createAuthServer(
  ctx: ServiceContext,
  stores: AuthServerStores,
  callerAddress: CallerAddress,
  given: AuthServerKeys = {},
): Promise<Provider> {
  const { config, mongo, logger } = ctx;
  const { users } = stores;
  // The provider keeps the keys it is given: api/auth-server/auth-server.routes.ts builds a new one when they change.
  const [signingKeys, cookieKeys] = await Promise.all([
    given.signingKeys ?? stores.signingKeys(),
    given.cookieKeys ?? loadCookieKeys(mongo),
  ]);
  const { issuer, audience } = tokenIdentity(config.publicUrl);
  const serviceOrigin = new URL(config.publicUrl).origin;
  /** The language of a page the provider asks for (sign-out, errors): as the sign-in pages choose it (interaction.routes.ts). */
  const pageLocale = (oidcCtx: KoaContextWithOIDC): Locale =>
    chooseLocale({
      uiLocales: (oidcCtx.oidc?.params as { ui_locales?: unknown } | undefined)?.ui_locales,
      acceptLanguage: oidcCtx.get('accept-language'),
      fallback: config.signInDefaultLocale,
    });
  // loadExistingGrant needs the instance it belongs to, which exists once the configuration does.
  const self: { provider?: Provider } = {};
  // Sign-ins started, counted per caller address where their interactions are stored (sign-in-start-limit.ts).
  const signInStarts = createSignInStartLimit(stores.signInStartLimits);
  // A sign-out form posted just after its session's end still signs out (sign-out-after-session-end.ts).
  const endedSignOuts = createSignOutAfterSessionEnd(config.signIn.interactionTtlSeconds);
  const Adapter = adapterAnsweringStoreOutages(
    signInStarts.countingPageRecords(
      endedSignOuts.keepingSignOutForms(
        // A session ends SIGN_IN_SESSION_TTL_SECONDS after its sign-in, however often it is used (session-lifetime.ts).
        sessionsEndingWithTheirLifetime(createOidcAdapter(stores.oidcRecords, stores.clientLookup), config.signIn.sessionTtlSeconds),
      ),
    ),
  );

  const configuration: Configuration = {
    adapter: Adapter,
    jwks: { keys: signingKeys.all.map((key) => new NodeSigningKey(key)) },
    cookies: { keys: cookieKeys, names: providerCookieNames(config.publicUrl) },
    routes: { ...AUTH_SERVER_ROUTES },
    scopes: ['openid', 'offline_access', ...CLIENT_SCOPES],
    // Only who the user is (`sub`, and `enterprise_id`, added by presentUsersByUserId): profile
    // data is served by /v1/me to the user's token.
    claims: { openid: ['sub', 'enterprise_id'] },
    responseTypes: ['code'],
    // The languages the sign-in pages speak, so an app can pick its `ui_locales` from them.
    discovery: { ui_locales_supported: [...SHIPPED_LOCALES] },
    // redirect_uri is required and must match a registered one exactly, even for a client with one.
    allowOmittingSingleRegisteredRedirectUri: false,
    // HTTP Basic, and the secret in the form body since common OAuth libraries default to it;
    // `none` for public clients (authorization code + PKCE). A client registered for either
    // secret method may use both. No method that uses the secret as an HMAC key: we only hold its hash.
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { idTokenSigningAlgValues: [ID_TOKEN_SIGNING_ALG] },
    extraClientMetadata: { properties: [...EXTRA_CLIENT_METADATA] },
    clientDefaults: {
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: ID_TOKEN_SIGNING_ALG,
    },
    ttl: {
      ClientCredentials: config.accessTokenTtlSeconds,
      AccessToken: config.accessTokenTtlSeconds,
      // Authorization codes are single use and live at most 60 seconds.
      AuthorizationCode: 60,
      IdToken: config.accessTokenTtlSeconds,
      RefreshToken: config.signIn.refreshTokenTtlSeconds,
      Grant: config.signIn.refreshTokenTtlSeconds,
      // Counted from the sign-in, not from the session's last use (session-lifetime.ts).
      Session: sessionLifetimeFromSignIn(config.signIn.sessionTtlSeconds, config.signIn.interactionTtlSeconds),
      Interaction: config.signIn.interactionTtlSeconds,
    },
    // S256 only (the provider's default); required for public clients, and for any client whose
    // code goes to a plain-http address off loopback (where it can be read on the way: PKCE binds
    // it to the browser that asked); accepted from confidential ones otherwise.
    pkce: {
      required: (oidcCtx, client) => client.clientAuthMethod === 'none' || isPlainHttpOffLoopback(oidcCtx.oidc.params?.redirect_uri),
    },
    // Every use of a refresh token returns a new one; reusing a rotated one revokes the grant.
    rotateRefreshToken: true,
    // A user token records when its user signed in, for routes that ask for a recent sign-in.
    extraTokenClaims: signInTimeClaims,
    features: {
      devInteractions: { enabled: false },
      // Lets tokens be signed by NodeSigningKey (node:crypto); pinned to the experiment's version,
      // so an oidc-provider that changes the interface refuses to start instead of misbehaving.
      externalSigningSupport: { enabled: true, ack: 'experimental-01' },
      clientCredentials: { enabled: true },
      // Offered to confidential clients for their own tokens.
      introspection: {
        enabled: true,
        allowedPolicy: async (_oidcCtx, client, token) => client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
      // Every client revokes its own tokens; public ones (apps on devices) identify themselves
      // with client_id alone, since the token is theirs and revoking can only take access away.
      revocation: {
        enabled: true,
        allowedPolicy: async (_oidcCtx, client, token) => {
          if (token.clientId !== client.clientId) throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
          return true;
        },
      },
      // Not offered (discovery advertises only what is built and tested): profile data is at
      // /v1/me, there is no logout page, requests are not pushed, tokens are bearer tokens.
      // The userinfo endpoint is ours (api/auth-server/userinfo.routes.ts): the provider's refuses
      // every user token, since they carry the API as audience.
      userinfo: { enabled: false },
      // Sign-out (OpenID Connect RP-Initiated Logout 1.0): ends the browser session and every
      // grant made in it (refresh tokens included, oidc-adapter.ts), on a page of our own.
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (oidcCtx, form) => {
          const client = oidcCtx.oidc.client;
          const state = oidcCtx.oidc.session?.state as { postLogoutRedirectUri?: string } | undefined;
          const returnTo = state?.postLogoutRedirectUri ? [formActionSourceOf(state.postLogoutRedirectUri)] : [];
          const locale = pageLocale(oidcCtx);
          const everywhere = translate(locale, 'logout.everywhere');
          sendPage(
            oidcCtx,
            renderPage(
              'logout',
              {
                locale,
                title: translate(locale, 'logout.title'),
                // Not the pages' "Signing in to <app>" line: this page signs out.
                message: client?.clientName
                  ? `${translate(locale, 'logout.appAsks', { app: client.clientName })} ${everywhere}`
                  : everywhere,
                action: formAction(form),
                csrf: formXsrf(form),
              },
              returnTo,
            ),
          );
        },
        postLogoutSuccessSource: (oidcCtx) => {
          const locale = pageLocale(oidcCtx);
          sendPage(
            oidcCtx,
            renderMessagePage({ locale, title: translate(locale, 'signedOut.title'), message: translate(locale, 'signedOut.message') }),
          );
        },
      },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (oidcCtx: KoaContextWithOIDC, resource: string, client) => {
          if (resource !== audience) throw new errors.InvalidTarget();
          const params = oidcCtx.oidc.params as { grant_type?: string } | undefined;
          if (params?.grant_type === 'client_credentials') {
            const scopes = apiScopesOf(client);
            applyClientCredentialsScopePolicy(oidcCtx, scopes);
            return {
              scope: scopes.join(' '),
              audience,
              accessTokenTTL: config.accessTokenTtlSeconds,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: signingKeys.tokens.alg, kid: signingKeys.tokens.kid } },
            };
          }
          // A user's token is opaque: every use is checked against the store, so a revoked
          // grant (revocation, replayed code, reused refresh token) ends it at once.
          return {
            scope: USER_ACCESS_TOKEN_SCOPES.join(' '),
            audience,
            accessTokenTTL: config.accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    // Browser calls to the token endpoint: the service's own origin (the docs page's "Authorize"
    // button) for any client; otherwise the client's web origins, the same rule as /v1/me*
    // (core/clients/web-origins.ts: public clients only, whose secrets-free apps run in pages).
    clientBasedCORS: (_oidcCtx, origin, client) => origin === serviceOrigin || webOriginsOfClient(client).includes(origin),
    // The account behind user tokens: sign-in, ID tokens and every refresh check it again, so
    // a user blocked, deleted or deactivated meanwhile gets no new tokens. The account id is
    // (enterprise, user): a session or grant of another enterprise's user is no account here.
    findAccount: async (oidcCtx, accountId) => {
      const client = oidcCtx.oidc.client;
      const ref = userOfAccountId(accountId);
      if (!client || !ref || ref.enterpriseId !== enterpriseOfClient(client)) return undefined;
      const user = await answeringStoreOutages(() => findUserForSignIn(users, ref, ref.userId));
      if (!user || !canSignIn(user)) return undefined;
      return { accountId, claims: () => ({ sub: ref.userId }) };
    },
    interactions: {
      url: (_ctx, interaction) => `${AUTH_SERVER_PATH}/interaction/${interaction.uid}`,
      policy: signInPolicy(),
    },
    // First-party apps skip consent: their grant covers what the request asks.
    loadExistingGrant: async (oidcCtx) => {
      // The last hook the provider calls before it issues a code on resume.
      refuseRedirectUriRemovedSinceStart(oidcCtx);
      const { client, session, result, account } = oidcCtx.oidc;
      const { provider } = self;
      if (!client || !session || !provider || !account) return undefined;
      const grantId = (result?.consent as { grantId?: string } | undefined)?.grantId ?? session.grantIdFor(client.clientId);
      const found = grantId ? await provider.Grant.find(grantId) : undefined;
      // A grant of another account (the session changed hands) is never reused.
      const existing = found && found.accountId === account.accountId && found.clientId === client.clientId ? found : undefined;
      if (!isFirstParty(client)) return existing;
      const grant = existing ?? new provider.Grant({ clientId: client.clientId, accountId: account.accountId });
      const requested = [...oidcCtx.oidc.requestParamScopes];
      const oidcScopes = requested.filter((scope) => scope === 'openid' || scope === 'offline_access');
      const resourceScopes = requested.filter((scope) => (USER_ACCESS_TOKEN_SCOPES as readonly string[]).includes(scope));
      if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
      if (resourceScopes.length > 0) grant.addResourceScope(audience, resourceScopes.join(' '));
      await grant.save();
      return grant;
    },
    renderError: (oidcCtx, out) => {
      const locale = pageLocale(oidcCtx);
      sendPage(
        oidcCtx,
        renderMessagePage({
          locale,
          title: translate(locale, 'oauthError.title'),
          message: describeOAuthError(locale, String(out.error), String(out.error_description ?? '')),
        }),
      );
    },
  };

  const provider = new Provider(issuer, configuration);
  self.provider = provider;
  // Endpoint URLs in discovery are built from X-Forwarded-Host/-Proto, which the routes set from
  // PUBLIC_URL on every request (api/auth-server/auth-server.routes.ts), never from the caller.
  provider.proxy = true;
  // Koa would print every unexpected error to stderr; ours go through the JSON logger instead.
  provider.silent = true;
  provider.on('server_error', (_oidcCtx: unknown, err: Error) => logger.error({ err }, 'authorization server error'));
  // First, so it is around every step added below.
  answerStoreOutages(provider);
  answerGrantTypeRefusalsAsUnauthorizedClient(provider);

  // The stored `client_secret` is an HMAC (core/clients/client-secret.ts), so the comparison
  // oidc-provider would make against the clear secret is swapped for ours, on this instance's
  // Client class only. It also accepts the secret a rotation replaced, during its grace period.
  const ClientClass = provider.Client as unknown as {
    prototype: { compareClientSecret: (actual: string) => Promise<boolean>; includeSid: () => boolean };
  };
  // Every ID token carries `sid` (discovery advertises it), not only for back-channel logout clients.
  ClientClass.prototype.includeSid = () => true;
  ClientClass.prototype.compareClientSecret = async function compareHashedSecret(this: { clientId: string }, actual: string) {
    if (acceptsClientSecret(storedSecretsOfClient(this), actual)) return true;
    // A secret just rotated by another process is not in this process's client cache yet: a
    // look in the store lets the new secret work here too. At most one look per client every
    // few seconds, so wrong secrets sent with a known client id cannot make every request a read.
    // A store that cannot tell is "retry later": the secret may be the new one.
    const stored = await answeringStoreOutages(() => stores.clientLookup.recheckedClientWithSecret(this.clientId));
    return stored !== null && !stored.isPublic && acceptsClientSecret(stored, actual);
  };
  reuseClientInstances(provider, new Adapter('Client'));
  // Outside every other step of these endpoints (it counts their final 401s, those that
  // answerMissingClientAuthentication writes included), and around the client look-up above.
  limitFailedClientAuthentication(provider, {
    limits: stores.clientAuthenticationLimits,
    callerAddress,
    endpoints: CLIENT_AUTHENTICATING_ENDPOINTS,
    logger,
  });
  // Authorization requests and sign-outs from an address whose budget of sign-in pages is spent (sign-in-start-limit.ts).
  signInStarts.refuseSpentAddresses(provider, {
    callerAddress,
    authorizationPath: AUTH_SERVER_ROUTES.authorization,
    endSessionPath: AUTH_SERVER_ROUTES.end_session,
    refusalPage: (oidcCtx, refusal) => renderMessagePage(tooManyRequestsPageData(pageLocale(oidcCtx as KoaContextWithOIDC), refusal)),
  });
  endedSignOuts.markSignOutConfirmations(provider, AUTH_SERVER_ROUTES.end_session);
  presentUsersByUserId(provider);
  advertiseUserinfo(provider, `${issuer}/userinfo`);
  answerMissingClientAuthentication(provider);
  answerForEnterpriseTokens(provider, {
    verify: createEnterpriseTokenVerifier(stores.verificationKeys, { issuer, audience }),
    revoked: stores.revokedTokens,
    checks: stores.revocations,
  });
  return provider;
}

/**
 * The account id is `<enterpriseId>:<userId>`, but tokens name the user as they always have, by
 * the bare userId, with the enterprise beside it (`enterprise_id`): ID tokens (built by the
 * provider's Claims class) and introspection answers (user access tokens are opaque).
 */
function presentUsersByUserId(provider: Provider): void {
  const ClaimsClass = provider.Claims as unknown as {
    prototype: { result: () => Promise<Record<string, unknown>> };
  };
  const result = ClaimsClass.prototype.result;
  ClaimsClass.prototype.result = async function resultWithUserId(this: { available: Record<string, unknown> }) {
    const claims = await result.call(this);
    // ID tokens always say when the user signed in (discovery advertises auth_time); the
    // provider would add it only when asked (max_age, prompt=login) or for clients registered
    // with require_auth_time, which in turn refuses plain OAuth sign-ins without `openid`.
    const authTime = typeof this.available.auth_time === 'number' ? { auth_time: this.available.auth_time } : {};
    return { ...claims, ...authTime, ...subjectOf(claims.sub) };
  };
  provider.use(async (oidcCtx, next) => {
    await next();
    const body = oidcCtx.body as { sub?: unknown } | undefined;
    if (oidcCtx.oidc?.route === 'introspection' && body && typeof body === 'object' && 'sub' in body)
      Object.assign(body, subjectOf(body.sub));
  });
}

/** Discovery names our UserInfo endpoint (api/auth-server/userinfo.routes.ts), served beside the provider. */
function advertiseUserinfo(provider: Provider, url: string): void {
  provider.use(async (oidcCtx, next) => {
    await next();
    if (oidcCtx.oidc?.route === 'discovery' && oidcCtx.body && typeof oidcCtx.body === 'object') {
      Object.assign(oidcCtx.body, { userinfo_endpoint: url });
    }
  });
}

/**
 * The user as tokens present it: `sub` the bare userId, and `enterprise_id` the enterprise it
 * belongs to, since the same userId may be two people of two enterprises under one issuer: an app
 * registered with several enterprises keys its accounts by (`enterprise_id`, `sub`).
 */
function subjectOf(sub: unknown): { sub?: string; enterprise_id?: string } {
  if (typeof sub !== 'string') return {};
  const ref = userOfAccountId(sub);
  return ref ? { sub: ref.userId, enterprise_id: ref.enterpriseId } : {};
}

/**
 * The provider's prompts, with one more reason to show the login page: the session names an
 * account this client cannot use (a user of another enterprise, or one blocked, deleted or
 * deactivated since). Without it the provider would go on to consent with no account and fail;
 * with it, `prompt=none` answers `login_required` to the app as OpenID Connect prescribes. And
 * a request that asks for no scope a sign-in can grant is refused before any page.
 */
function signInPolicy(): interactionPolicy.Prompt[] {
  const policy = interactionPolicy.base();
  const login = policy.get('login');
  if (!login) throw new Error('oidc-provider has no login prompt');
  login.checks.add(
    new interactionPolicy.Check('account_unavailable', 'End-User authentication is required', 'login_required', (oidcCtx) =>
      oidcCtx.oidc.session?.accountId && !oidcCtx.oidc.account
        ? interactionPolicy.Check.REQUEST_PROMPT
        : interactionPolicy.Check.NO_NEED_TO_PROMPT,
    ),
    0,
  );
  login.checks.add(scopeRequiredCheck(), 0);
  return policy;
}

function sendPage(oidcCtx: KoaContextWithOIDC, page: { html: string; csp: string }): void {
  oidcCtx.type = 'html';
  oidcCtx.set('Content-Security-Policy', page.csp);
  oidcCtx.set('Cache-Control', 'no-store');
  oidcCtx.body = page.html;
}

/** The confirm URL and CSRF token of the provider's sign-out form, rendered into our own page. */
function formAction(form: string): string {
  const match = /action="([^"]+)"/.exec(form);
  if (!match?.[1]) throw new Error('sign-out form without action');
  return match[1];
}

function formXsrf(form: string): string {
  const match = /name="xsrf" value="([^"]+)"/.exec(form);
  if (!match?.[1]) throw new Error('sign-out form without xsrf');
  return match[1];
}
