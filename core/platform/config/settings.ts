// Every setting of svc-identity, declared once: its variable, type and validation, default, doc
// line and section. The typed settings, the JSON Schema every process checks its environment
// against, `.env.example` and the tables in docs/configuration.md all come from this table
// (`npm run config:docs` writes the last two; a unit test fails when they differ).
import type { RawEnvironment, SettingDeclaration, SettingValues } from './setting-declaration.js';
import { cidrListProblems, privateRsaJwkProblems, trustProxyProblems } from './setting-checks.js';
import { isLoopbackHost } from '../loopback-host.js';

/** Loopback targets and the example app are for local runs: on in development unless set. */
const onInDevelopment = (env: RawEnvironment) => (env.NODE_ENV === 'development' ? 'on' : 'off');
const ON_IN_DEVELOPMENT = '`on` when `NODE_ENV=development`, else `off`';

/**
 * A process whose PUBLIC_URL other machines reach is a server: unless told otherwise it runs in
 * production (the secrets required, no demo app, no loopback callbacks), so a Procfile line run
 * as is on a server fails closed instead of serving development defaults. Only a local run
 * (`npm start`, PUBLIC_URL unset or loopback) is development without saying so.
 */
function modeForPublicUrl(env: RawEnvironment): string {
  if (!env.PUBLIC_URL) return 'development';
  try {
    return isLoopbackHost(new URL(env.PUBLIC_URL).hostname) ? 'development' : 'production';
  } catch {
    return 'production'; // not a URL: PUBLIC_URL's own check names the problem
  }
}

const BODY_SIZE = { kind: 'string', pattern: '^[0-9]+(b|kb|mb)$', format: 'a size: digits and b, kb or mb (e.g. 64kb)' } as const;
const HTTP_BASE = { kind: 'string', pattern: '^https?://[^/]+$', format: 'http(s)://host[:port] without a path' } as const;
const TWILIO_SID = { kind: 'string', pattern: '^AC[0-9a-fA-F]{32}$', format: 'AC followed by 32 hex characters' } as const;
const TWILIO_SERVICE = { kind: 'string', pattern: '^MG[0-9a-fA-F]{32}$', format: 'MG followed by 32 hex characters' } as const;
const CONCURRENCY = { kind: 'integer', min: 1, max: 1000 } as const;
const POINTS = { kind: 'integer', min: 1 } as const;
const WINDOW = { kind: 'integer', min: 1 } as const;
const windowOf = (key: string) => `the window of \`${key}\`, in seconds`;

export const SETTINGS = {
  // --- runtime ---
  NODE_ENV: {
    section: 'runtime',
    kind: 'enum',
    values: ['development', 'test', 'production'],
    default: modeForPublicUrl,
    defaultText: '`development` while `PUBLIC_URL` is unset or on this machine (loopback), else `production`',
    example: 'production',
    doc: '`development`, `test` or `production`; production requires the secrets below',
  },
  PORT: { section: 'runtime', kind: 'integer', min: 0, max: 65535, default: 8080, doc: 'HTTP port of the API' },
  HOST: { section: 'runtime', kind: 'string', minLength: 1, default: '0.0.0.0', doc: 'interface to bind' },
  PUBLIC_URL: {
    section: 'runtime',
    kind: 'string',
    pattern: '^https?://[^/]+(/.*)?$',
    format: 'http(s)://host[/path]',
    required: true,
    default: (env) => `http://localhost:${env.PORT ?? ''}`,
    defaultText: '`http://localhost:<PORT>`',
    example: 'https://id.example.com',
    doc: 'external base URL (`http(s)://host[/path]`): the token issuer is `PUBLIC_URL/svc/authserver`, the token audience `PUBLIC_URL/v1`, and Twilio signatures are checked against it',
  },
  LOG_LEVEL: {
    section: 'runtime',
    kind: 'enum',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  },
  TRUST_PROXY: {
    section: 'runtime',
    kind: 'string',
    minLength: 1,
    default: 'false',
    check: trustProxyProblems,
    doc: "which `X-Forwarded-For` hop is the caller's address (IP allow-lists, per-address limits): `false`, a hop count, or comma-separated addresses/CIDRs of trusted proxies; `true` (trust every hop, so any caller could choose its address) stops the process with a message",
  },
  BODY_LIMIT: {
    section: 'runtime',
    ...BODY_SIZE,
    default: '7mb',
    doc: 'largest accepted body of Add user, the one route that carries images (`<n>b`, `kb` or `mb`); selfie images are up to 5 MB decoded',
  },
  SMALL_BODY_LIMIT: {
    section: 'runtime',
    ...BODY_SIZE,
    default: '64kb',
    doc: 'largest accepted body of every other JSON route (Generate OTP allows 256 KB for its macros)',
  },
  REQUEST_DEADLINE_MS: {
    section: 'runtime',
    kind: 'integer',
    min: 1000,
    max: 600000,
    default: 5000,
    doc: 'an OTP request not committed this long after it arrived is refused with 503 and nothing is sent (a caller that gave up gets no message it has no uuid for)',
  },
  IDEMPOTENCY_KEY_RETENTION_SECONDS: {
    section: 'runtime',
    kind: 'integer',
    min: 3600,
    max: 604800,
    default: 86400,
    doc: 'how long an `Idempotency-Key` of `POST /v1/notifications` and the admin creating requests (clients, secret rotations, activation re-issue) is remembered: a retry within it gets the first answer again and creates nothing (OTP keys keep 24 hours)',
  },
  IDEMPOTENCY_SECRET_REPLAY_SECONDS: {
    section: 'runtime',
    kind: 'integer',
    min: 0,
    max: 3600,
    default: 300,
    doc: 'how long an answer holding a secret shown once (a new client, a rotated secret) is kept, sealed with `OTP_ENCRYPTION_KEY`, to be given again to a retry with the same `Idempotency-Key`; later the retry is 409 and creates nothing (0: never kept)',
  },
  SHUTDOWN_DEADLINE_MS: {
    section: 'runtime',
    kind: 'integer',
    min: 1000,
    max: 600000,
    default: 25000,
    doc: 'how long SIGTERM waits for requests and jobs in flight',
  },
  SHUTDOWN_DRAIN_WINDOW_MS: {
    section: 'runtime',
    kind: 'integer',
    min: 0,
    max: 300000,
    default: 5000,
    doc: "after SIGTERM the API serves on this long before it stops listening: `/readyz` answers 503 and every answer carries `Connection: close`, so keep-alive clients leave without a request being reset; set it above the load balancer's time to take the instance out of rotation",
  },
  DEMO_APPROVER: {
    section: 'runtime',
    kind: 'switch',
    default: onInDevelopment,
    defaultText: ON_IN_DEVELOPMENT,
    doc: '`on` serves the approver example app at `/demo/approver/` and registers its public client `approver-demo` in the default enterprise ([approver-app.md](approver-app.md))',
  },
  ACTIVATION_APP_URL: {
    section: 'runtime',
    kind: 'string',
    pattern: '^https?://[^#\\s]+$',
    format: 'an http(s):// URL without a fragment',
    maxLength: 500,
    defaultText: '`PUBLIC_URL/demo/approver/`',
    doc: "the app page that activation links open (`http(s)://`, no fragment): the link adds `#enterprise=…&user=…&code=…` ([enrollment.md](enrollment.md)); set it to your own app's page when the example app is off",
  },
  PASSKEY_RP_ID: {
    section: 'runtime',
    kind: 'string',
    pattern: '^[A-Za-z0-9.-]{1,253}$',
    format: 'a host name',
    defaultText: 'host of `PUBLIC_URL`',
    doc: "the passkeys' relying party id: a host name that the origins below are equal to or subdomains of; passkeys are bound to it, so changing it later orphans every registered passkey ([sign-in.md](sign-in.md#passkeys))",
  },
  PASSKEY_ORIGINS: {
    section: 'runtime',
    kind: 'string',
    minLength: 1,
    maxLength: 2000,
    defaultText: 'origin of `PUBLIC_URL`',
    doc: "comma-separated origins (`scheme://host[:port]`) whose pages may register passkeys: the example app lives at `PUBLIC_URL`; add your own apps' origins if they register passkeys through `/v1/me/passkeys`. Sign-in answers are accepted from the sign-in page only, at the origin of `PUBLIC_URL`, whatever this lists. Set values must be `https` (or `http` on `localhost`) and within `PASSKEY_RP_ID`, else the process does not start",
  },

  // --- stores ---
  MONGODB_URI: {
    section: 'stores',
    kind: 'string',
    pattern: '^mongodb(\\+srv)?://',
    format: 'a mongodb:// or mongodb+srv:// URI',
    required: true,
    secret: true,
    defaultText: 'required (`npm start`: the local server)',
    example: 'mongodb://127.0.0.1:27017/svc-identity',
    doc: '`mongodb://` or `mongodb+srv://` URI including the database name (production: a replica set); a command unanswered for 30 s fails unless the URI sets `socketTimeoutMS`; writes wait for a majority (`w=majority`, 10 s `wtimeoutMS`) and are retried once after a failover (`retryWrites=true`) unless the URI sets these options ([operations.md](operations.md#mongodb-in-production))',
  },
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: {
    section: 'stores',
    kind: 'integer',
    min: 100,
    max: 120000,
    default: 15000,
    doc: 'how long a command waits for a suitable server (the primary, for writes) before it fails: long enough to outlast a replica-set election; while no MongoDB server is reachable at all the API answers 503 at once instead ([operations.md](operations.md#mongodb-in-production)); a `serverSelectionTimeoutMS` in `MONGODB_URI` wins',
  },
  REDIS_URL: {
    section: 'stores',
    kind: 'string',
    pattern: '^rediss?://',
    format: 'a redis:// or rediss:// URL',
    secret: true,
    defaultText: 'one of the two is required (`npm start`: the local server)',
    example: 'redis://127.0.0.1:6379',
    doc: 'one Redis: `redis://` or `rediss://` URL',
  },
  REDIS_CLUSTER_NODES: {
    section: 'stores',
    kind: 'string',
    minLength: 1,
    defaultText: 'one of the two is required',
    doc: 'a Redis Cluster: comma-separated `host:port` seed nodes (e.g. `10.0.0.1:6379,10.0.0.2:6379`; IPv6 as `[::1]:6379`); the client learns every other node from them. Giving both this and `REDIS_URL` stops the process',
  },
  REDIS_COMMAND_TIMEOUT_MS: {
    section: 'stores',
    kind: 'integer',
    min: 100,
    max: 60000,
    default: 1000,
    doc: "how long the API waits for Redis to answer one command before it fails it: a Redis that stops answering without closing the connection (a stopped process, a partition) then makes rate limits fall back to the in-process budget and dispatch jobs wait in the API, as while Redis is down, instead of holding requests until the operating system gives up on the connection. Workers' connections do not time out (their blocking reads wait on purpose)",
  },
  QUEUE_PREFIX: {
    section: 'stores',
    kind: 'string',
    pattern: '^[A-Za-z0-9_:-]{1,64}$',
    format: '1 to 64 of A-Z a-z 0-9 _ : -',
    default: 'svc',
    doc: 'prefix of the BullMQ and Redis keys (`[A-Za-z0-9_:-]`, 1 to 64); on a Redis Cluster it is wrapped in a hash tag, `{svc}`',
  },

  // --- secrets ---
  ADMIN_TOKEN: {
    section: 'secrets',
    kind: 'string',
    minLength: 24,
    secret: true,
    requiredInProduction: true,
    doc: 'bearer token of the `/admin` API and CLI (24 characters or more); without it the admin API answers 503',
  },
  METRICS_TOKEN: {
    section: 'secrets',
    kind: 'string',
    minLength: 24,
    secret: true,
    doc: "optional: bearer token that `/metrics` then asks of scrapers, the API's and the workers' (24 characters or more); unset, `/metrics` answers anyone who reaches its port",
  },
  OTP_HMAC_KEY: {
    section: 'secrets',
    kind: 'string',
    pattern: '^[A-Za-z0-9+/=_-]{43,}$',
    format: 'base64 or base64url of 32 bytes or more (43+ characters)',
    secret: true,
    requiredToRun: true,
    doc: 'base64 or base64url, 32 bytes or more (43+ characters): HMAC key of OTP and activation-code digests',
  },
  OTP_ENCRYPTION_KEY: {
    section: 'secrets',
    kind: 'string',
    pattern: '^[0-9a-fA-F]{64}$',
    format: '64 hex characters',
    secret: true,
    requiredToRun: true,
    doc: '64 hex characters: AES-256-GCM key of `PLAIN` OTPs, of codes in delivery rows and job data, and of the signing keys and other private keys kept in MongoDB (changing it makes them unreadable: an API process whose key does not open the stored signing keys refuses to start)',
  },
  SIGNING_KEY_JWK: {
    section: 'secrets',
    kind: 'string',
    minLength: 2,
    secret: true,
    check: privateRsaJwkProblems,
    doc: 'optional: a private RSA JWK of 2048 bits or more (JSON with `kty: RSA`, `n`, `e`, `d`) signing ID tokens, and access tokens when `ACCESS_TOKEN_SIGNING_ALG=RS256`; when unset, a key is generated on first start and kept in MongoDB, sealed with `OTP_ENCRYPTION_KEY`',
  },

  // --- tokens and sign-in lifetimes ---
  ACCESS_TOKEN_SIGNING_ALG: {
    section: 'sign-in',
    kind: 'enum',
    values: ['ES256', 'RS256'],
    default: 'ES256',
    doc: '`ES256` (P-256 key, generated once and kept in MongoDB sealed with `OTP_ENCRYPTION_KEY`) or `RS256` (the RSA key): signs access tokens and OTP validation JWTs; ID tokens are always RS256; keys used before a change stay in the JWKS',
  },
  ACCESS_TOKEN_TTL_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 60,
    max: 86400,
    default: 3600,
    doc: 'lifetime of access tokens (and ID tokens)',
  },
  TOKEN_REVOCATION_CHECK_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 0,
    max: 300,
    default: 5,
    doc: 'how long an API process trusts its last look-up of whether an enterprise access token was revoked (0 looks up on every request): a revoked token is refused everywhere within this time',
  },
  SIGNING_KEY_RELOAD_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 1,
    max: 3600,
    default: 60,
    doc: 'how often each API process reads the signing keys again, so a rotation reaches every process without a restart even when its Redis notice is lost (processes told through Redis read them at once); a rotated key starts signing twice this long after the rotation',
  },
  SIGNING_KEY_ROTATION_DAYS: {
    section: 'sign-in',
    kind: 'integer',
    min: 0,
    max: 3650,
    default: 0,
    doc: 'rotate the token signing keys on schedule once the key signing access tokens has signed for this many days, as a rotation without `retireAtOnce` does (nothing is refused; recorded in the activity record); 0: only when asked (admin API or CLI)',
  },
  CLIENT_SECRET_GRACE_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 0,
    max: 2592000,
    default: 86400,
    doc: 'after `POST /admin/clients/{clientId}/secret` (or `clients rotate-secret`), how long the replaced client secret keeps working (24 hours by default; 0 stops it at once)',
  },
  REFRESH_TOKEN_TTL_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 3600,
    max: 31536000,
    default: 2592000,
    doc: "lifetime of a user's refresh token and of the grant behind it (30 days by default); every use returns a new one",
  },
  SIGN_IN_SESSION_TTL_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 300,
    max: 2592000,
    default: 86400,
    doc: 'lifetime of the browser session a sign-in leaves behind (24 hours by default): within it, apps get tokens without the user signing in again',
  },
  SIGN_IN_INTERACTION_TTL_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 60,
    max: 86400,
    default: 900,
    doc: 'how long one sign-in (from the authorization request to its answer) may take (15 minutes by default)',
  },
  LOGIN_CODE_TTL_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 60,
    max: 3600,
    default: 300,
    doc: 'lifetime of a login code sent by SMS or e-mail (5 minutes by default)',
  },
  PASSKEY_REGISTRATION_MAX_AUTH_AGE_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 60,
    max: 86400,
    default: 300,
    doc: 'how recent the sign-in behind a user token must be to add a passkey (5 minutes by default); an older one gets 401 `insufficient_user_authentication` with `max_age`, and the app signs the user in again with that `max_age` ([sign-in.md](sign-in.md#passkeys))',
  },
  PASSKEY_REMOVAL_MAX_AUTH_AGE_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 60,
    max: 86400,
    default: 600,
    doc: "how recent the sign-in behind a user token must be to remove one of the user's passkeys (10 minutes by default); an older one gets 401 `insufficient_user_authentication` with `max_age`, as for adding one ([sign-in.md](sign-in.md#passkeys)); admins' removals are not concerned",
  },
  LOGIN_FAMILIAR_ADDRESS_SECONDS: {
    section: 'sign-in',
    kind: 'integer',
    min: 3600,
    max: 31536000,
    default: 7776000,
    doc: "how long an address a user signed in from (for IPv6, its /64) counts as theirs, so that strangers' attempts elsewhere do not use up its budgets (90 days by default)",
  },

  // --- workers ---
  DISPATCH_CONCURRENCY: { section: 'workers', ...CONCURRENCY, default: 10, doc: 'jobs a dispatch worker process runs at once' },
  ENROLLMENT_CONCURRENCY: { section: 'workers', ...CONCURRENCY, default: 5, doc: 'jobs an enrollment worker process runs at once' },
  NOTIFICATION_CONCURRENCY: {
    section: 'workers',
    ...CONCURRENCY,
    // Expiry jobs are one small conditional write each: many in flight keep a burst of expiries on time.
    default: 50,
    doc: 'expiry jobs a notification worker process runs at once',
  },
  NOTIFICATION_SWEEP_INTERVAL_MS: {
    section: 'workers',
    kind: 'integer',
    min: 100,
    max: 3600000,
    default: 500,
    doc: 'how often the notification worker expires whatever is past due (the safety net for lost or late expiry jobs)',
  },
  NOTIFICATION_RETENTION_DAYS: {
    section: 'workers',
    kind: 'integer',
    min: 1,
    max: 3650,
    default: 90,
    doc: 'ended notifications are deleted this long after they ended',
  },
  NOTIFICATION_CALLBACK_CONCURRENCY: { section: 'workers', ...CONCURRENCY, default: 10, doc: 'signed callbacks sent at once' },
  NOTIFICATION_CALLBACK_RETRY_BASE_MS: {
    section: 'workers',
    kind: 'integer',
    min: 10,
    max: 3600000,
    default: 1000,
    doc: 'first retry delay of a failed callback, doubling up to one hour, for about a day',
  },
  NOTIFICATION_CALLBACK_TIMEOUT_MS: {
    section: 'workers',
    kind: 'integer',
    min: 100,
    max: 120000,
    default: 10000,
    doc: 'a callback receiver slower than this counts as failed',
  },
  NOTIFICATION_CALLBACK_ALLOW_LOOPBACK: {
    section: 'workers',
    kind: 'switch',
    default: onInDevelopment,
    defaultText: ON_IN_DEVELOPMENT,
    doc: '`on`/`off`: callbacks may go to loopback (127.0.0.0/8, ::1, `localhost`), over http as well as https; for local runs only (see [security.md](security.md))',
  },
  NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: {
    section: 'workers',
    kind: 'string',
    maxLength: 4000,
    check: cidrListProblems,
    defaultText: '(none)',
    doc: 'comma-separated CIDR ranges of private networks callbacks may reach (https only), e.g. `10.20.0.0/16`; every other non-public address is refused. A bare address or anything but a CIDR range stops the start',
  },
  PUSH_CONCURRENCY: { section: 'workers', ...CONCURRENCY, default: 10, doc: 'Web Push jobs a notification worker process runs at once' },
  PUSH_RETRY_BASE_MS: {
    section: 'workers',
    kind: 'integer',
    min: 10,
    max: 3600000,
    default: 1000,
    doc: 'first retry delay of a push the push service answered 429 or 5xx, doubling up to five minutes, 8 attempts',
  },
  PUSH_TIMEOUT_MS: {
    section: 'workers',
    kind: 'integer',
    min: 100,
    max: 120000,
    default: 10000,
    doc: 'a push service slower than this counts as failed',
  },
  PUSH_ENDPOINT_ALLOW_LOOPBACK: {
    section: 'workers',
    kind: 'switch',
    default: onInDevelopment,
    defaultText: ON_IN_DEVELOPMENT,
    doc: '`on`/`off`: push subscription endpoints may be loopback (127.0.0.0/8, ::1, `localhost`), over http as well as https; for local tests only (see [security.md](security.md))',
  },
  PUSH_SUBSCRIPTIONS_PER_USER: {
    section: 'workers',
    kind: 'integer',
    min: 1,
    max: 100,
    default: 10,
    doc: 'push subscriptions one user may hold; one more is refused with 409',
  },
  WORKER_LOCK_DURATION_MS: {
    section: 'workers',
    kind: 'integer',
    min: 500,
    max: 600000,
    default: 8000,
    doc: 'job lock, renewed every quarter of it; a job of a worker that died is retried within about 1.5 times this (see [reliability.md](reliability.md))',
  },
  SWEEPER_INTERVAL_MS: {
    section: 'workers',
    kind: 'integer',
    min: 100,
    max: 3600000,
    default: 15000,
    doc: 'how often the sweepers look for QUEUED deliveries, unsent activation messages and unwritten activity entries of user blocks, deletions and activations',
  },
  SWEEPER_GRACE_MS: {
    section: 'workers',
    kind: 'integer',
    min: 100,
    max: 86400000,
    default: 60000,
    doc: 'a delivery QUEUED this long without progress is enqueued again',
  },
  SENT_JOURNAL_MAX_BACKLOG: {
    section: 'workers',
    kind: 'integer',
    min: 1,
    max: 100000000,
    default: 100000,
    doc: 'sends journaled in Redis but not yet written to their MongoDB rows past which dispatch workers pause sending',
  },
  METRICS_PORT: {
    section: 'workers',
    kind: 'integer',
    min: 0,
    max: 65535,
    default: 0,
    doc: 'worker processes (dispatch, enrollment, notifications) serve Prometheus metrics at `/metrics` (behind `METRICS_TOKEN` when set) and a liveness probe at `/healthz` on this port, on every interface; `0` serves none. The API serves `/metrics` on `PORT`',
  },

  // --- Web Push ---
  VAPID_PUBLIC_KEY: {
    section: 'push',
    kind: 'string',
    pattern: '^[A-Za-z0-9_-]{86,88}$',
    format: 'a base64url P-256 public key (86 to 88 characters)',
    doc: 'optional: the P-256 public key signing Web Push (RFC 8292), base64url as `npx web-push generate-vapid-keys` prints it; set together with `VAPID_PRIVATE_KEY` or not at all',
  },
  VAPID_PRIVATE_KEY: {
    section: 'push',
    kind: 'string',
    pattern: '^[A-Za-z0-9_-]{42,44}$',
    format: 'a base64url P-256 private key (42 to 44 characters)',
    secret: true,
    doc: 'its private half (base64url); a pair that does not belong together stops the start',
  },
  VAPID_SUBJECT: {
    section: 'push',
    kind: 'string',
    pattern: '^(mailto:[^\\s]+|https://[^\\s]+)$',
    format: 'a mailto: or https: URL',
    maxLength: 500,
    defaultText: '`mailto:` + `EMAIL_FROM`',
    doc: 'the contact push services see in every VAPID token: a `mailto:` or `https:` URL',
  },

  // --- message providers ---
  TWILIO_ACCOUNT_SID: {
    section: 'providers',
    ...TWILIO_SID,
    doc: '`AC` + 32 hex; with `TWILIO_AUTH_TOKEN` enables SMS through Twilio (one without the other stops the process)',
  },
  TWILIO_AUTH_TOKEN: {
    section: 'providers',
    kind: 'string',
    minLength: 8,
    secret: true,
    doc: 'also verifies `X-Twilio-Signature` on `POST /webhooks/twilio/status`',
  },
  TWILIO_FROM: { section: 'providers', kind: 'string', minLength: 1, doc: 'sender number (E.164) ...' },
  TWILIO_MESSAGING_SERVICE_SID: {
    section: 'providers',
    ...TWILIO_SERVICE,
    doc: '... or a messaging service (`MG` + 32 hex), which wins when both are set; one of the two is required with Twilio credentials',
  },
  TWILIO_API_BASE_URL: { section: 'providers', ...HTTP_BASE, doc: 'tests and mocks only: replaces `https://api.twilio.com`' },
  TWILIO_SECONDARY_ACCOUNT_SID: {
    section: 'providers',
    ...TWILIO_SID,
    doc: 'a second Twilio account that SMS fails over to ([operations.md](operations.md#failover-between-providers)); needs the primary account',
  },
  TWILIO_SECONDARY_AUTH_TOKEN: {
    section: 'providers',
    kind: 'string',
    minLength: 8,
    secret: true,
    doc: 'its token; also verifies its status callbacks',
  },
  TWILIO_SECONDARY_FROM: { section: 'providers', kind: 'string', minLength: 1, doc: 'its sender number ...' },
  TWILIO_SECONDARY_MESSAGING_SERVICE_SID: {
    section: 'providers',
    ...TWILIO_SERVICE,
    doc: '... or its messaging service (one is required with its credentials)',
  },
  TWILIO_SECONDARY_API_BASE_URL: { section: 'providers', ...HTTP_BASE, doc: 'tests and mocks only' },
  PROVIDER_BREAKER_ERROR_PERCENT: {
    section: 'providers',
    kind: 'integer',
    min: 1,
    max: 100,
    default: 50,
    doc: 'share of failed sends through one account, over the window, that moves new SMS to the other account',
  },
  PROVIDER_BREAKER_WINDOW_SECONDS: {
    section: 'providers',
    kind: 'integer',
    min: 1,
    max: 3600,
    default: 60,
    doc: 'the window of that error rate',
  },
  PROVIDER_BREAKER_MIN_REQUESTS: {
    section: 'providers',
    kind: 'integer',
    min: 1,
    max: 10000,
    default: 5,
    doc: 'fewer sends in the window never move traffic',
  },
  PROVIDER_BREAKER_RESET_SECONDS: {
    section: 'providers',
    kind: 'integer',
    min: 1,
    max: 3600,
    default: 30,
    doc: 'after this, one trial send goes to the failing account; success brings traffic back',
  },
  SENDGRID_API_KEY: { section: 'providers', kind: 'string', minLength: 8, secret: true, doc: 'enables e-mail through SendGrid' },
  SENDGRID_API_BASE_URL: {
    section: 'providers',
    kind: 'string',
    pattern: '^https?://[^/]+/?$',
    format: 'http(s)://host[:port] without a path',
    doc: 'tests and mocks only: replaces `https://api.sendgrid.com/`',
  },
  EMAIL_FROM: {
    section: 'providers',
    kind: 'string',
    minLength: 3,
    default: 'no-reply@example.com',
    doc: 'sender address of every e-mail',
  },
  SENDGRID_WEBHOOK_PUBLIC_KEY: {
    section: 'providers',
    kind: 'string',
    pattern: '^[A-Za-z0-9+/=]{40,}$',
    format: 'base64 (40 characters or more)',
    doc: "base64 verification key (P-256) of SendGrid's signed Event Webhook, as SendGrid shows it; another value stops the start; without it events are refused (403)",
  },

  // --- abuse limits ---
  RATE_LIMIT_OTP_PER_USER: { section: 'limits', ...POINTS, default: 5, doc: 'OTP generations per userId, across clients' },
  RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: { section: 'limits', ...WINDOW, default: 600, doc: windowOf('RATE_LIMIT_OTP_PER_USER') },
  RATE_LIMIT_OTP_PER_CLIENT: { section: 'limits', ...POINTS, default: 1000, doc: 'OTP generations per client' },
  RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS: { section: 'limits', ...WINDOW, default: 60, doc: windowOf('RATE_LIMIT_OTP_PER_CLIENT') },
  RATE_LIMIT_VALIDATE_PER_CLIENT: { section: 'limits', ...POINTS, default: 3000, doc: 'OTP validations per client' },
  RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS: {
    section: 'limits',
    ...WINDOW,
    default: 60,
    doc: windowOf('RATE_LIMIT_VALIDATE_PER_CLIENT'),
  },
  RATE_LIMIT_ACTIVATE_PER_IP: {
    section: 'limits',
    ...POINTS,
    default: 60,
    doc: 'activation requests per caller address (all users), counted before the body is read',
  },
  RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS: { section: 'limits', ...WINDOW, default: 60, doc: windowOf('RATE_LIMIT_ACTIVATE_PER_IP') },
  RATE_LIMIT_LOGIN_PER_IP: {
    section: 'limits',
    ...POINTS,
    default: 60,
    doc: 'forms posted to the sign-in pages per caller address (all users); raise it when many users share one address (corporate NAT)',
  },
  RATE_LIMIT_LOGIN_PER_IP_WINDOW_SECONDS: { section: 'limits', ...WINDOW, default: 60, doc: windowOf('RATE_LIMIT_LOGIN_PER_IP') },
  RATE_LIMIT_LOGIN_PER_USER: {
    section: 'limits',
    ...POINTS,
    default: 60,
    doc: 'sign-in steps per user id from addresses it has not signed in from',
  },
  RATE_LIMIT_LOGIN_PER_USER_WINDOW_SECONDS: { section: 'limits', ...WINDOW, default: 900, doc: windowOf('RATE_LIMIT_LOGIN_PER_USER') },
  RATE_LIMIT_LOGIN_CODES_PER_USER: {
    section: 'limits',
    ...POINTS,
    default: 10,
    doc: 'sign-in codes sent per user id, asked from addresses it has not signed in from',
  },
  RATE_LIMIT_LOGIN_CODES_PER_USER_WINDOW_SECONDS: {
    section: 'limits',
    ...WINDOW,
    default: 3600,
    doc: windowOf('RATE_LIMIT_LOGIN_CODES_PER_USER'),
  },
  RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS: {
    section: 'limits',
    ...POINTS,
    default: 10,
    doc: 'failed authentications of one client from one caller address at the token, introspection and revocation endpoints; then that address gets 429 for that client until the window ends (other addresses are not affected)',
  },
  RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS_WINDOW_SECONDS: {
    section: 'limits',
    ...WINDOW,
    default: 900,
    doc: windowOf('RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS'),
  },
  RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS: {
    section: 'limits',
    ...POINTS,
    default: 100,
    doc: 'failed client authentications (wrong secret, unknown client id, none sent) from one caller address, whatever the client; then that address gets 429 for every client until the window ends. Raise it when many clients share one address',
  },
  RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS_WINDOW_SECONDS: {
    section: 'limits',
    ...WINDOW,
    default: 900,
    doc: windowOf('RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS'),
  },
  NOTIFICATION_STREAMS_PER_PROCESS: {
    section: 'limits',
    kind: 'integer',
    min: 1,
    max: 100000,
    default: 1000,
    doc: 'notification event streams (`GET /v1/me/notifications/stream`) one API process holds, of which 10 per user; past it a new one is answered 503 with `Retry-After`. Each open stream costs about 15 KiB of heap and two MongoDB reads every 15 s ([benchmarks.md](benchmarks.md))',
  },

  // --- sign-in limits ---
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS: {
    section: 'sign-in-limits',
    ...POINTS,
    default: 30,
    doc: 'steps (user id, code, new code) for one user id from one address',
  },
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS_WINDOW_SECONDS: {
    section: 'sign-in-limits',
    ...WINDOW,
    default: 900,
    doc: windowOf('RATE_LIMIT_LOGIN_PER_USER_ADDRESS'),
  },
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS: {
    section: 'sign-in-limits',
    ...POINTS,
    default: 3,
    doc: 'codes sent for one user id at the request of one address',
  },
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS_WINDOW_SECONDS: {
    section: 'sign-in-limits',
    ...WINDOW,
    default: 900,
    doc: windowOf('RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS'),
  },
  LOGIN_MAX_FAILURES: {
    section: 'sign-in-limits',
    kind: 'integer',
    min: 1,
    max: 100,
    default: 100,
    doc: 'wrong login codes in a row, across codes and addresses, that lock sign-in until an admin unlocks it or the user activates again (NIST SP 800-63B allows at most 100)',
  },
  LOGIN_USER_STEP_FLOOR_MS: {
    section: 'sign-in-limits',
    kind: 'integer',
    min: 0,
    max: 5000,
    default: 250,
    doc: 'the user-id and new-code steps answer no sooner than this after they arrived, so every kind of user id takes the same time',
  },

  // --- activation limits ---
  ACTIVATION_FREE_FAILURES_PER_ADDRESS: {
    section: 'activation-limits',
    kind: 'integer',
    min: 1,
    max: 100,
    default: 5,
    doc: 'wrong codes for one user from one address before that address waits 1, 2, 4 ... seconds',
  },
  ACTIVATION_MAX_DELAY_PER_ADDRESS_SECONDS: {
    section: 'activation-limits',
    kind: 'integer',
    min: 1,
    max: 86400,
    default: 900,
    doc: 'longest wait of one address',
  },
  ACTIVATION_FREE_FAILURES_PER_USER: {
    section: 'activation-limits',
    kind: 'integer',
    min: 1,
    max: 99,
    default: 20,
    doc: 'wrong codes for one user from all addresses before every address waits; below `ACTIVATION_MAX_FAILURES`',
  },
  ACTIVATION_MAX_DELAY_PER_USER_SECONDS: {
    section: 'activation-limits',
    kind: 'integer',
    min: 1,
    max: 86400,
    default: 3600,
    doc: 'longest wait for one user',
  },
  ACTIVATION_MAX_FAILURES: {
    section: 'activation-limits',
    kind: 'integer',
    // NIST SP 800-63B 5.2.2: no more than 100 consecutive failed attempts on one account.
    min: 2,
    max: 100,
    default: 100,
    doc: 'consecutive wrong codes that void a code until an admin re-issues it (NIST SP 800-63B allows at most 100)',
  },
  ACTIVATION_FAILURE_FLOOR_MS: {
    section: 'activation-limits',
    kind: 'integer',
    min: 0,
    max: 5000,
    default: 250,
    doc: 'a refused activation answers no sooner than this after it arrived, so known and unknown users take the same time',
  },

  // --- enrollment ---
  ACTIVATION_CODE_TTL_SECONDS: {
    section: 'enrollment',
    kind: 'integer',
    min: 60,
    max: 7776000,
    default: 604800,
    doc: 'lifetime of an activation code (7 days by default)',
  },
  FACE_ANALYZER_URL: {
    section: 'enrollment',
    kind: 'string',
    pattern: '^https?://[^/]+(/.*)?$',
    format: 'an http(s):// URL',
    doc: 'optional face analyzer for selfies; contract in [enrollment.md](enrollment.md)',
  },
  FACE_ANALYZER_TIMEOUT_MS: {
    section: 'enrollment',
    kind: 'integer',
    min: 100,
    max: 60000,
    default: 5000,
    doc: 'an analyzer slower than this fails the enrollment with 500',
  },
} as const satisfies Record<string, SettingDeclaration>;

export type SettingName = keyof typeof SETTINGS;

/** The validated values of every setting: numbers as numbers, on/off as booleans, unset optional ones undefined. */
export type Settings = SettingValues<typeof SETTINGS>;
