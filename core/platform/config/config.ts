import { createECDH } from 'node:crypto';
import AjvModule from 'ajv';
import ipaddr from 'ipaddr.js';
import { configSchema } from './config.schema.js';
import { schemaErrorLine } from '../schemas/schema-error-message.js';
import { queuePrefixFor, readRedisTarget, type RedisTarget } from './redis-target.js';
import { readPasskeyConfig, type PasskeyConfig } from './passkey-config.js';

const Ajv = AjvModule.default;

export interface Config {
  readonly nodeEnv: 'development' | 'test' | 'production';
  readonly port: number;
  readonly host: string;
  readonly logLevel: string;
  readonly mongodbUri: string;
  /** How long a command waits for a primary: long enough to outlast a replica-set election. */
  readonly mongoServerSelectionTimeoutMs: number;
  /** One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
  readonly redis: RedisTarget;
  /** Prefix of every Redis key (QUEUE_PREFIX; on a cluster wrapped in a hash tag, e.g. `{svc}`). */
  readonly queuePrefix: string;
  readonly publicUrl: string;
  readonly adminToken: string | undefined;
  /** Serve the approver example app at /demo/approver/ with its public client (on by default in development only). */
  readonly demoApprover: boolean;
  /**
   * The app page that activation links open (ACTIVATION_APP_URL); default the approver example
   * app of this service, `PUBLIC_URL/demo/approver/`.
   */
  readonly activationAppUrl: string;
  /** Passkeys (WebAuthn): relying party id and the origins whose pages may use it. */
  readonly passkeys: PasskeyConfig;
  /** Express `trust proxy`: false, a hop count, or the proxies' addresses/CIDRs (never `true`). */
  readonly trustProxy: false | number | string;
  /** Request body limit of routes that carry images (enrollment with a selfie). */
  readonly bodyLimit: string;
  /** Request body limit of every other JSON route. */
  readonly smallBodyLimit: string;
  readonly otpHmacKey: string | undefined;
  readonly otpEncryptionKey: string | undefined;
  readonly signingKeyJwk: string | undefined;
  readonly accessTokenTtlSeconds: number;
  /** How long an API process trusts its last look-up of whether an enterprise token was revoked. */
  readonly tokenRevocationCheckSeconds: number;
  /** After a client secret is rotated, how long the replaced one keeps working (0: it stops at once). */
  readonly clientSecretGraceSeconds: number;
  readonly shutdownDeadlineMs: number;
  /**
   * After SIGTERM the API serves on this long (readiness 503, every answer `Connection: close`)
   * before it stops listening, so keep-alive clients leave without a request being reset.
   */
  readonly shutdownDrainWindowMs: number;
  /**
   * An OTP request still short of writing its delivery rows after this long is refused (503)
   * instead of going on: a caller that gave up must not get a message it has no uuid for.
   */
  readonly requestDeadlineMs: number;
  /** How long a worker's job lock lives; a dead worker's job is retried after about this long. */
  readonly workerLockDurationMs: number;
  readonly sweeperIntervalMs: number;
  readonly sweeperGraceMs: number;
  /** Sends journaled but not yet on their rows past which dispatch workers pause sending. */
  readonly sentJournalMaxBacklog: number;
  /** Worker processes serve /metrics on this port; 0 = not served (the API serves /metrics on PORT). */
  readonly metricsPort: number;
  readonly rateLimits: {
    readonly otpPerUser: RateLimit;
    readonly otpPerClient: RateLimit;
    readonly validatePerClient: RateLimit;
  };
  /** User activation: code lifetime and the throttle of POST /v1/users/activate (docs/security.md). */
  readonly activation: {
    readonly codeTtlSeconds: number;
    readonly perIp: RateLimit;
    readonly maxFailures: number;
    readonly freeFailuresPerAddress: number;
    readonly freeFailuresPerUser: number;
    readonly maxDelayPerAddressSeconds: number;
    readonly maxDelayPerUserSeconds: number;
    /** A refused activation answers no sooner than this after arrival (hides timing differences). */
    readonly failureFloorMs: number;
  };
  /** Throttling of the sign-in pages (docs/security.md): per address, per (user, address), per user; the failure cap. */
  readonly login: {
    readonly perIp: RateLimit;
    readonly perUserAddress: RateLimit;
    readonly perUser: RateLimit;
    readonly codesPerUserAddress: RateLimit;
    readonly codesPerUser: RateLimit;
    /** Consecutive failed code checks of a user id after which sign-in is locked until an admin unlocks it. */
    readonly maxFailures: number;
    /** The user-id and new-code steps answer no sooner than this after arrival (hides timing differences). */
    readonly userStepFloorMs: number;
  };
  /** Set when FACE_ANALYZER_URL is given: selfies are also checked by that service. */
  readonly faceAnalyzer: { readonly url: string; readonly timeoutMs: number } | undefined;
  readonly concurrency: { readonly dispatch: number; readonly enrollment: number; readonly notification: number };
  /** The notification worker: expiry sweep, retention of ended notifications, callbacks. */
  readonly notifications: {
    readonly sweepIntervalMs: number;
    readonly retentionDays: number;
    readonly callbackConcurrency: number;
    readonly callbackRetryBaseMs: number;
    readonly callbackTimeoutMs: number;
    /**
     * Where callbacks may go besides public addresses: loopback (on in development unless
     * turned off) and the private networks an operator lists (docs/security.md).
     */
    readonly callbackAddresses: { readonly allowLoopback: boolean; readonly allowedNetworks: readonly string[] };
  };
  /** Web Push to the users' browsers (content-free: it only says something is waiting). */
  readonly push: PushConfig;
  /** Set when Twilio credentials are given; otherwise SMS goes to the outbox. */
  readonly twilio: TwilioConfig | undefined;
  /** A second Twilio account SMS fails over to (docs/operations.md); only with the primary one. */
  readonly twilioSecondary: TwilioConfig | undefined;
  /** When a provider counts as failing, so that new messages go to the other one of its channel. */
  readonly providerBreaker: ProviderBreakerConfig;
  /** Set when a SendGrid API key is given; otherwise e-mail goes to the outbox. */
  readonly sendgrid: SendgridConfig | undefined;
  /** Base64 DER public key verifying SendGrid event webhooks; without it they are refused. */
  readonly sendgridWebhookPublicKey: string | undefined;
  readonly emailFrom: string;
}

export type { RedisTarget } from './redis-target.js';
export type { PasskeyConfig } from './passkey-config.js';

export interface PushConfig {
  /** The VAPID key pair from VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY; unset: one generated once and kept in MongoDB. */
  readonly vapidKeys: { readonly publicKey: string; readonly privateKey: string } | undefined;
  /** The contact push services see in every VAPID token (mailto: or https:). */
  readonly vapidSubject: string;
  readonly subscriptionsPerUser: number;
  readonly concurrency: number;
  readonly retryBaseMs: number;
  readonly timeoutMs: number;
  /** Where subscription endpoints may point besides public https addresses: loopback (development or opt-in). */
  readonly endpointAddresses: { readonly allowLoopback: boolean; readonly allowedNetworks: readonly string[] };
}

export interface TwilioConfig {
  readonly accountSid: string;
  readonly authToken: string;
  /** Exactly one of `from` and `messagingServiceSid` is used; the messaging service wins. */
  readonly from: string | undefined;
  readonly messagingServiceSid: string | undefined;
  /** Only for tests and mocks: replaces https://api.twilio.com. */
  readonly apiBaseUrl: string | undefined;
}

export interface ProviderBreakerConfig {
  /** Share of failed sends over the window that opens the breaker. */
  readonly errorPercent: number;
  /** The window the error rate is measured over. */
  readonly windowMs: number;
  /** Fewer sends than this in the window never open the breaker. */
  readonly minRequests: number;
  /** How long an open breaker keeps traffic away before one trial send goes through. */
  readonly resetMs: number;
}

export interface SendgridConfig {
  readonly apiKey: string;
  /** Only for tests and mocks: replaces https://api.sendgrid.com/. */
  readonly apiBaseUrl: string | undefined;
}

export interface RateLimit {
  readonly points: number;
  readonly durationSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const DEFAULTS: Record<string, string> = {
  NODE_ENV: 'development',
  PORT: '8080',
  HOST: '0.0.0.0',
  LOG_LEVEL: 'info',
  QUEUE_PREFIX: 'svc',
  TRUST_PROXY: 'false',
  BODY_LIMIT: '7mb',
  SMALL_BODY_LIMIT: '64kb',
  ACCESS_TOKEN_TTL_SECONDS: '3600',
  TOKEN_REVOCATION_CHECK_SECONDS: '5',
  CLIENT_SECRET_GRACE_SECONDS: '86400',
  SHUTDOWN_DEADLINE_MS: '25000',
  SHUTDOWN_DRAIN_WINDOW_MS: '5000',
  REQUEST_DEADLINE_MS: '5000',
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: '15000',
  DISPATCH_CONCURRENCY: '10',
  ENROLLMENT_CONCURRENCY: '5',
  // Expiry jobs are one small conditional write each: many in flight keep a burst of expiries on time.
  NOTIFICATION_CONCURRENCY: '50',
  NOTIFICATION_SWEEP_INTERVAL_MS: '500',
  NOTIFICATION_RETENTION_DAYS: '90',
  NOTIFICATION_CALLBACK_CONCURRENCY: '10',
  NOTIFICATION_CALLBACK_RETRY_BASE_MS: '1000',
  NOTIFICATION_CALLBACK_TIMEOUT_MS: '10000',
  PUSH_SUBSCRIPTIONS_PER_USER: '10',
  PUSH_CONCURRENCY: '10',
  PUSH_RETRY_BASE_MS: '1000',
  PUSH_TIMEOUT_MS: '10000',
  EMAIL_FROM: 'no-reply@example.com',
  WORKER_LOCK_DURATION_MS: '8000',
  SWEEPER_INTERVAL_MS: '15000',
  SWEEPER_GRACE_MS: '60000',
  SENT_JOURNAL_MAX_BACKLOG: '100000',
  METRICS_PORT: '0',
  RATE_LIMIT_OTP_PER_USER: '5',
  RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600',
  RATE_LIMIT_OTP_PER_CLIENT: '1000',
  RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS: '60',
  RATE_LIMIT_VALIDATE_PER_CLIENT: '3000',
  RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS: '60',
  ACTIVATION_CODE_TTL_SECONDS: '604800',
  RATE_LIMIT_ACTIVATE_PER_IP: '60',
  RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS: '60',
  ACTIVATION_MAX_FAILURES: '100',
  ACTIVATION_FREE_FAILURES_PER_ADDRESS: '5',
  ACTIVATION_FREE_FAILURES_PER_USER: '20',
  ACTIVATION_MAX_DELAY_PER_ADDRESS_SECONDS: '900',
  ACTIVATION_MAX_DELAY_PER_USER_SECONDS: '3600',
  ACTIVATION_FAILURE_FLOOR_MS: '250',
  FACE_ANALYZER_TIMEOUT_MS: '5000',
  RATE_LIMIT_LOGIN_PER_IP: '60',
  RATE_LIMIT_LOGIN_PER_IP_WINDOW_SECONDS: '60',
  RATE_LIMIT_LOGIN_PER_USER: '60',
  RATE_LIMIT_LOGIN_PER_USER_WINDOW_SECONDS: '900',
  RATE_LIMIT_LOGIN_CODES_PER_USER: '10',
  RATE_LIMIT_LOGIN_CODES_PER_USER_WINDOW_SECONDS: '3600',
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS: '30',
  RATE_LIMIT_LOGIN_PER_USER_ADDRESS_WINDOW_SECONDS: '900',
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS: '3',
  RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS_WINDOW_SECONDS: '900',
  LOGIN_MAX_FAILURES: '100',
  LOGIN_USER_STEP_FLOOR_MS: '250',
};

// Secrets that must be given explicitly in production (no generated or default value).
const PRODUCTION_SECRETS = ['ADMIN_TOKEN', 'OTP_HMAC_KEY', 'OTP_ENCRYPTION_KEY'];

/** A token-signing key given in env must be usable, or the process would fail on its first token. */
function isPrivateRsaJwk(value: string): boolean {
  try {
    const jwk = JSON.parse(value) as Record<string, unknown>;
    return jwk.kty === 'RSA' && ['n', 'e', 'd'].every((member) => typeof jwk[member] === 'string');
  } catch {
    return false;
  }
}

function parseTrustProxy(value: string): false | number | string {
  if (value === 'false') return false;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .join(', ');
}

/**
 * TRUST_PROXY says which X-Forwarded-For hop is the caller: a hop count, or the proxies'
 * addresses/CIDRs. `true` would believe any client-written header, letting a caller pick the
 * address that allow-lists and per-address limits see, so it is refused.
 */
function trustProxyProblems(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  if (value.trim().toLowerCase() === 'true') {
    return [
      "TRUST_PROXY: 'true' would trust any X-Forwarded-For a caller writes (bypassing IP allow-lists and per-address limits); give the number of proxy hops in front of the service (e.g. 1) or the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)",
    ];
  }
  if (value === 'false' || /^[0-9]{1,2}$/.test(value)) return [];
  const bad = value
    .split(',')
    .map((s) => s.trim())
    .filter((entry) => !isAddressOrCidr(entry));
  return bad.length > 0 || value.trim() === ''
    ? [`TRUST_PROXY: must be false, a hop count (0-99) or a comma-separated list of addresses/CIDRs; not valid: ${bad.join(', ') || value}`]
    : [];
}

/** NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: CIDR ranges only (a bare address is a /32 the operator should say). */
function callbackNetworksProblems(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const bad = splitList(value).filter((entry) => !entry.includes('/') || !isAddressOrCidr(entry));
  return bad.length > 0
    ? [`NOTIFICATION_CALLBACK_ALLOWED_NETWORKS: must be a comma-separated list of CIDR ranges; not valid: ${bad.join(', ')}`]
    : [];
}

/** Both VAPID keys or neither, and a pair that belongs together: a wrong pair would have every push refused. */
function vapidKeyProblems(publicKey: unknown, privateKey: unknown): string[] {
  if (publicKey === undefined && privateKey === undefined) return [];
  if (typeof publicKey !== 'string' || typeof privateKey !== 'string') {
    return ['VAPID_PRIVATE_KEY: VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are set together or not at all'];
  }
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(privateKey, 'base64url'));
    if (ecdh.getPublicKey('base64url') === publicKey) return [];
  } catch {
    // Not a P-256 private key: reported below.
  }
  return ['VAPID_PRIVATE_KEY: must be the P-256 private key of VAPID_PUBLIC_KEY (base64url, as web-push generate-vapid-keys prints them)'];
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function isAddressOrCidr(value: string): boolean {
  try {
    if (value.includes('/')) ipaddr.parseCIDR(value);
    else ipaddr.parse(value);
    return true;
  } catch {
    return false;
  }
}

// A half-configured provider would silently fall back to the outbox; refuse to start instead.
function providerProblems(raw: Record<string, unknown>): string[] {
  const problems = [...twilioProblems(raw, 'TWILIO_'), ...twilioProblems(raw, 'TWILIO_SECONDARY_')];
  if (raw.TWILIO_SECONDARY_ACCOUNT_SID !== undefined && raw.TWILIO_ACCOUNT_SID === undefined) {
    problems.push('TWILIO_SECONDARY_ACCOUNT_SID: a secondary Twilio account needs the primary one (TWILIO_ACCOUNT_SID)');
  }
  return problems;
}

/** `TWILIO_` (the primary account) or `TWILIO_SECONDARY_` (the one SMS fails over to). */
type TwilioPrefix = 'TWILIO_' | 'TWILIO_SECONDARY_';

function twilioProblems(raw: Record<string, unknown>, prefix: TwilioPrefix): string[] {
  const problems: string[] = [];
  const sid = `${prefix}ACCOUNT_SID`;
  const token = `${prefix}AUTH_TOKEN`;
  const hasSid = raw[sid] !== undefined;
  const hasToken = raw[token] !== undefined;
  if (hasSid !== hasToken) problems.push(`${hasSid ? token : sid}: is required with ${hasSid ? sid : token}`);
  if (hasSid && hasToken && raw[`${prefix}FROM`] === undefined && raw[`${prefix}MESSAGING_SERVICE_SID`] === undefined) {
    problems.push(`${prefix}FROM: ${prefix}FROM or ${prefix}MESSAGING_SERVICE_SID is required with Twilio credentials`);
  }
  return problems;
}

function readTwilio(raw: Record<string, unknown>, prefix: TwilioPrefix = 'TWILIO_'): TwilioConfig | undefined {
  if (raw[`${prefix}ACCOUNT_SID`] === undefined || raw[`${prefix}AUTH_TOKEN`] === undefined) return undefined;
  return Object.freeze({
    accountSid: raw[`${prefix}ACCOUNT_SID`] as string,
    authToken: raw[`${prefix}AUTH_TOKEN`] as string,
    from: raw[`${prefix}FROM`] as string | undefined,
    messagingServiceSid: raw[`${prefix}MESSAGING_SERVICE_SID`] as string | undefined,
    apiBaseUrl: (raw[`${prefix}API_BASE_URL`] as string | undefined)?.replace(/\/$/, ''),
  });
}

function readSendgrid(raw: Record<string, unknown>): SendgridConfig | undefined {
  if (raw.SENDGRID_API_KEY === undefined) return undefined;
  const base = raw.SENDGRID_API_BASE_URL as string | undefined;
  return Object.freeze({
    apiKey: raw.SENDGRID_API_KEY as string,
    apiBaseUrl: base === undefined ? undefined : `${base.replace(/\/$/, '')}/`,
  });
}

/** Reads, validates and freezes the configuration; throws one ConfigError naming every bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(configSchema.properties)) {
    const value = env[key] === undefined || env[key] === '' ? DEFAULTS[key] : env[key];
    if (value !== undefined) raw[key] = value;
  }
  if (raw.PUBLIC_URL === undefined && raw.PORT !== undefined) raw.PUBLIC_URL = `http://localhost:${String(raw.PORT)}`;

  const ajv = new Ajv({ allErrors: true, coerceTypes: true, strict: true });
  const validate = ajv.compile(configSchema);
  const problems: string[] = [];
  if (!validate(raw)) {
    for (const error of validate.errors ?? []) problems.push(schemaErrorLine(error, '(configuration)'));
  }
  if (raw.SIGNING_KEY_JWK !== undefined && !isPrivateRsaJwk(raw.SIGNING_KEY_JWK as string)) {
    problems.push('SIGNING_KEY_JWK: must be a private RSA JWK as JSON (kty RSA with n, e, d)');
  }
  if (raw.NODE_ENV === 'production') {
    for (const key of PRODUCTION_SECRETS) if (raw[key] === undefined) problems.push(`${key}: is required in production`);
  }
  problems.push(...providerProblems(raw));
  problems.push(...trustProxyProblems(raw.TRUST_PROXY));
  const redis = readRedisTarget(raw);
  problems.push(...redis.problems);
  problems.push(...callbackNetworksProblems(raw.NOTIFICATION_CALLBACK_ALLOWED_NETWORKS));
  problems.push(...vapidKeyProblems(raw.VAPID_PUBLIC_KEY, raw.VAPID_PRIVATE_KEY));
  if ((raw.ACTIVATION_MAX_FAILURES as number) <= (raw.ACTIVATION_FREE_FAILURES_PER_USER as number)) {
    problems.push('ACTIVATION_FREE_FAILURES_PER_USER: must be below ACTIVATION_MAX_FAILURES');
  }
  const passkeys = readPasskeyConfig(raw);
  problems.push(...passkeys.problems);
  if (problems.length > 0 || !redis.target) throw new ConfigError([...new Set(problems)].sort());

  return Object.freeze({
    nodeEnv: raw.NODE_ENV as Config['nodeEnv'],
    port: raw.PORT as number,
    host: raw.HOST as string,
    logLevel: raw.LOG_LEVEL as string,
    mongodbUri: raw.MONGODB_URI as string,
    mongoServerSelectionTimeoutMs: raw.MONGODB_SERVER_SELECTION_TIMEOUT_MS as number,
    redis: redis.target,
    queuePrefix: queuePrefixFor(raw.QUEUE_PREFIX as string, redis.target),
    publicUrl: (raw.PUBLIC_URL as string).replace(/\/$/, ''),
    adminToken: raw.ADMIN_TOKEN as string | undefined,
    demoApprover: (raw.DEMO_APPROVER ?? (raw.NODE_ENV === 'development' ? 'on' : 'off')) === 'on',
    activationAppUrl: (raw.ACTIVATION_APP_URL as string | undefined) ?? `${(raw.PUBLIC_URL as string).replace(/\/$/, '')}/demo/approver/`,
    passkeys: passkeys.config,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY as string),
    bodyLimit: raw.BODY_LIMIT as string,
    smallBodyLimit: raw.SMALL_BODY_LIMIT as string,
    otpHmacKey: raw.OTP_HMAC_KEY as string | undefined,
    otpEncryptionKey: raw.OTP_ENCRYPTION_KEY as string | undefined,
    signingKeyJwk: raw.SIGNING_KEY_JWK as string | undefined,
    accessTokenTtlSeconds: raw.ACCESS_TOKEN_TTL_SECONDS as number,
    tokenRevocationCheckSeconds: raw.TOKEN_REVOCATION_CHECK_SECONDS as number,
    clientSecretGraceSeconds: raw.CLIENT_SECRET_GRACE_SECONDS as number,
    shutdownDeadlineMs: raw.SHUTDOWN_DEADLINE_MS as number,
    shutdownDrainWindowMs: raw.SHUTDOWN_DRAIN_WINDOW_MS as number,
    requestDeadlineMs: raw.REQUEST_DEADLINE_MS as number,
    workerLockDurationMs: raw.WORKER_LOCK_DURATION_MS as number,
    sweeperIntervalMs: raw.SWEEPER_INTERVAL_MS as number,
    sweeperGraceMs: raw.SWEEPER_GRACE_MS as number,
    sentJournalMaxBacklog: raw.SENT_JOURNAL_MAX_BACKLOG as number,
    metricsPort: raw.METRICS_PORT as number,
    rateLimits: Object.freeze({
      otpPerUser: Object.freeze({
        points: raw.RATE_LIMIT_OTP_PER_USER as number,
        durationSeconds: raw.RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS as number,
      }),
      otpPerClient: Object.freeze({
        points: raw.RATE_LIMIT_OTP_PER_CLIENT as number,
        durationSeconds: raw.RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS as number,
      }),
      validatePerClient: Object.freeze({
        points: raw.RATE_LIMIT_VALIDATE_PER_CLIENT as number,
        durationSeconds: raw.RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS as number,
      }),
    }),
    activation: Object.freeze({
      codeTtlSeconds: raw.ACTIVATION_CODE_TTL_SECONDS as number,
      perIp: Object.freeze({
        points: raw.RATE_LIMIT_ACTIVATE_PER_IP as number,
        durationSeconds: raw.RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS as number,
      }),
      maxFailures: raw.ACTIVATION_MAX_FAILURES as number,
      freeFailuresPerAddress: raw.ACTIVATION_FREE_FAILURES_PER_ADDRESS as number,
      freeFailuresPerUser: raw.ACTIVATION_FREE_FAILURES_PER_USER as number,
      maxDelayPerAddressSeconds: raw.ACTIVATION_MAX_DELAY_PER_ADDRESS_SECONDS as number,
      maxDelayPerUserSeconds: raw.ACTIVATION_MAX_DELAY_PER_USER_SECONDS as number,
      failureFloorMs: raw.ACTIVATION_FAILURE_FLOOR_MS as number,
    }),
    login: Object.freeze({
      perIp: Object.freeze({
        points: raw.RATE_LIMIT_LOGIN_PER_IP as number,
        durationSeconds: raw.RATE_LIMIT_LOGIN_PER_IP_WINDOW_SECONDS as number,
      }),
      perUserAddress: Object.freeze({
        points: raw.RATE_LIMIT_LOGIN_PER_USER_ADDRESS as number,
        durationSeconds: raw.RATE_LIMIT_LOGIN_PER_USER_ADDRESS_WINDOW_SECONDS as number,
      }),
      codesPerUserAddress: Object.freeze({
        points: raw.RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS as number,
        durationSeconds: raw.RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS_WINDOW_SECONDS as number,
      }),
      maxFailures: raw.LOGIN_MAX_FAILURES as number,
      userStepFloorMs: raw.LOGIN_USER_STEP_FLOOR_MS as number,
      perUser: Object.freeze({
        points: raw.RATE_LIMIT_LOGIN_PER_USER as number,
        durationSeconds: raw.RATE_LIMIT_LOGIN_PER_USER_WINDOW_SECONDS as number,
      }),
      codesPerUser: Object.freeze({
        points: raw.RATE_LIMIT_LOGIN_CODES_PER_USER as number,
        durationSeconds: raw.RATE_LIMIT_LOGIN_CODES_PER_USER_WINDOW_SECONDS as number,
      }),
    }),
    faceAnalyzer:
      raw.FACE_ANALYZER_URL === undefined
        ? undefined
        : Object.freeze({ url: raw.FACE_ANALYZER_URL as string, timeoutMs: raw.FACE_ANALYZER_TIMEOUT_MS as number }),
    concurrency: Object.freeze({
      dispatch: raw.DISPATCH_CONCURRENCY as number,
      enrollment: raw.ENROLLMENT_CONCURRENCY as number,
      notification: raw.NOTIFICATION_CONCURRENCY as number,
    }),
    notifications: Object.freeze({
      sweepIntervalMs: raw.NOTIFICATION_SWEEP_INTERVAL_MS as number,
      retentionDays: raw.NOTIFICATION_RETENTION_DAYS as number,
      callbackConcurrency: raw.NOTIFICATION_CALLBACK_CONCURRENCY as number,
      callbackRetryBaseMs: raw.NOTIFICATION_CALLBACK_RETRY_BASE_MS as number,
      callbackTimeoutMs: raw.NOTIFICATION_CALLBACK_TIMEOUT_MS as number,
      callbackAddresses: Object.freeze({
        allowLoopback: (raw.NOTIFICATION_CALLBACK_ALLOW_LOOPBACK ?? (raw.NODE_ENV === 'development' ? 'on' : 'off')) === 'on',
        allowedNetworks: Object.freeze(splitList((raw.NOTIFICATION_CALLBACK_ALLOWED_NETWORKS as string | undefined) ?? '')),
      }),
    }),
    push: Object.freeze({
      vapidKeys:
        raw.VAPID_PUBLIC_KEY === undefined || raw.VAPID_PRIVATE_KEY === undefined
          ? undefined
          : Object.freeze({ publicKey: raw.VAPID_PUBLIC_KEY as string, privateKey: raw.VAPID_PRIVATE_KEY as string }),
      vapidSubject: (raw.VAPID_SUBJECT as string | undefined) ?? `mailto:${raw.EMAIL_FROM as string}`,
      subscriptionsPerUser: raw.PUSH_SUBSCRIPTIONS_PER_USER as number,
      concurrency: raw.PUSH_CONCURRENCY as number,
      retryBaseMs: raw.PUSH_RETRY_BASE_MS as number,
      timeoutMs: raw.PUSH_TIMEOUT_MS as number,
      endpointAddresses: Object.freeze({
        allowLoopback: (raw.PUSH_ENDPOINT_ALLOW_LOOPBACK ?? (raw.NODE_ENV === 'development' ? 'on' : 'off')) === 'on',
        allowedNetworks: Object.freeze([]),
      }),
    }),
    twilio: readTwilio(raw),
    twilioSecondary: readTwilio(raw, 'TWILIO_SECONDARY_'),
    providerBreaker: Object.freeze({
      errorPercent: (raw.PROVIDER_BREAKER_ERROR_PERCENT as number | undefined) ?? 50,
      windowMs: ((raw.PROVIDER_BREAKER_WINDOW_SECONDS as number | undefined) ?? 60) * 1000,
      minRequests: (raw.PROVIDER_BREAKER_MIN_REQUESTS as number | undefined) ?? 5,
      resetMs: ((raw.PROVIDER_BREAKER_RESET_SECONDS as number | undefined) ?? 30) * 1000,
    }),
    sendgrid: readSendgrid(raw),
    sendgridWebhookPublicKey: raw.SENDGRID_WEBHOOK_PUBLIC_KEY as string | undefined,
    emailFrom: raw.EMAIL_FROM as string,
  });
}
