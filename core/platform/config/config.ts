// The typed configuration every process runs with: the settings of settings.ts, read and checked
// by settings-reader.ts, then arranged by concern. Its type is inferred from `arrange`, so the
// settings table is the only place a setting's type is written down.
import { createECDH, createPublicKey } from 'node:crypto';
import { queuePrefixFor, readRedisTarget, type RedisTarget } from './redis-target.js';
import { readPasskeyConfig, type PasskeyConfig } from './passkey-config.js';
import { splitList } from './setting-checks.js';
import { readSettings, type SettingsPurpose } from './settings-reader.js';
import type { Settings } from './settings.js';

export type { RedisTarget } from './redis-target.js';
export type { PasskeyConfig } from './passkey-config.js';
export type { Settings } from './settings.js';

export type Config = ReturnType<typeof arrange>;
export type PushConfig = Config['push'];
export type TwilioConfig = NonNullable<Config['twilio']>;
export type ProviderBreakerConfig = Config['providerBreaker'];
export type SendgridConfig = NonNullable<Config['sendgrid']>;

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

/** Both VAPID keys or neither, and a pair that belongs together: a wrong pair would have every push refused. */
function vapidKeyProblems(publicKey: string | undefined, privateKey: string | undefined): string[] {
  if (publicKey === undefined && privateKey === undefined) return [];
  if (publicKey === undefined || privateKey === undefined) {
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

/**
 * SendGrid signs its Event Webhook with ECDSA P-256 and shows the verification key as base64 DER
 * (SPKI). A value that is not one would have every event refused as forged, found only when
 * receipts stop arriving; refuse it at start instead.
 */
function sendgridWebhookKeyProblems(publicKey: string | undefined): string[] {
  if (publicKey === undefined) return [];
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return [];
  } catch {
    // Not a public key at all: reported below.
  }
  return [
    "SENDGRID_WEBHOOK_PUBLIC_KEY: must be the P-256 verification key of SendGrid's signed Event Webhook (base64, as SendGrid shows it)",
  ];
}

/** `TWILIO_` (the primary account) or `TWILIO_SECONDARY_` (the one SMS fails over to). */
type TwilioPrefix = 'TWILIO_' | 'TWILIO_SECONDARY_';

// A half-configured provider would silently fall back to the outbox; refuse to start instead.
function providerProblems(s: Settings): string[] {
  const problems = [...twilioProblems(s, 'TWILIO_'), ...twilioProblems(s, 'TWILIO_SECONDARY_')];
  if (s.TWILIO_SECONDARY_ACCOUNT_SID !== undefined && s.TWILIO_ACCOUNT_SID === undefined) {
    problems.push('TWILIO_SECONDARY_ACCOUNT_SID: a secondary Twilio account needs the primary one (TWILIO_ACCOUNT_SID)');
  }
  return problems;
}

function twilioProblems(s: Settings, prefix: TwilioPrefix): string[] {
  const raw = s as Readonly<Record<string, unknown>>;
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

/** Checks between settings, which the table's per-setting validation cannot make. */
function crossProblems(s: Settings): string[] {
  const problems = [
    ...providerProblems(s),
    ...sendgridWebhookKeyProblems(s.SENDGRID_WEBHOOK_PUBLIC_KEY),
    ...vapidKeyProblems(s.VAPID_PUBLIC_KEY, s.VAPID_PRIVATE_KEY),
  ];
  if (s.ACTIVATION_MAX_FAILURES <= s.ACTIVATION_FREE_FAILURES_PER_USER) {
    problems.push('ACTIVATION_FREE_FAILURES_PER_USER: must be below ACTIVATION_MAX_FAILURES');
  }
  return problems;
}

function parseTrustProxy(value: string): false | number | string {
  if (value === 'false') return false;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return splitList(value).join(', ');
}

function twilio(s: Settings, prefix: TwilioPrefix) {
  const primary = prefix === 'TWILIO_';
  const accountSid = primary ? s.TWILIO_ACCOUNT_SID : s.TWILIO_SECONDARY_ACCOUNT_SID;
  const authToken = primary ? s.TWILIO_AUTH_TOKEN : s.TWILIO_SECONDARY_AUTH_TOKEN;
  if (accountSid === undefined || authToken === undefined) return undefined;
  return Object.freeze({
    accountSid,
    authToken,
    /** Exactly one of `from` and `messagingServiceSid` is used; the messaging service wins. */
    from: primary ? s.TWILIO_FROM : s.TWILIO_SECONDARY_FROM,
    messagingServiceSid: primary ? s.TWILIO_MESSAGING_SERVICE_SID : s.TWILIO_SECONDARY_MESSAGING_SERVICE_SID,
    /** Only for tests and mocks: replaces https://api.twilio.com. */
    apiBaseUrl: (primary ? s.TWILIO_API_BASE_URL : s.TWILIO_SECONDARY_API_BASE_URL)?.replace(/\/$/, ''),
  });
}

const rateLimit = (points: number, durationSeconds: number): RateLimit => Object.freeze({ points, durationSeconds });

/** The configuration by concern; what each setting means is documented in settings.ts. */
function arrange(s: Settings, redis: RedisTarget, passkeys: PasskeyConfig) {
  const publicUrl = s.PUBLIC_URL.replace(/\/$/, '');
  return Object.freeze({
    nodeEnv: s.NODE_ENV,
    port: s.PORT,
    host: s.HOST,
    logLevel: s.LOG_LEVEL as string,
    mongodbUri: s.MONGODB_URI,
    mongoServerSelectionTimeoutMs: s.MONGODB_SERVER_SELECTION_TIMEOUT_MS,
    /** One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
    redis,
    /** The API's wait for one Redis command before it fails it (workers' connections have none). */
    redisCommandTimeoutMs: s.REDIS_COMMAND_TIMEOUT_MS,
    /** Prefix of every Redis key (on a cluster wrapped in a hash tag, e.g. `{svc}`). */
    queuePrefix: queuePrefixFor(s.QUEUE_PREFIX, redis),
    publicUrl,
    adminToken: s.ADMIN_TOKEN,
    metricsToken: s.METRICS_TOKEN,
    demoApprover: s.DEMO_APPROVER,
    activationAppUrl: s.ACTIVATION_APP_URL ?? (`${publicUrl}/demo/approver/` as string),
    passkeys,
    /** Express `trust proxy`: false, a hop count, or the proxies' addresses/CIDRs (never `true`). */
    trustProxy: parseTrustProxy(s.TRUST_PROXY),
    bodyLimit: s.BODY_LIMIT,
    smallBodyLimit: s.SMALL_BODY_LIMIT,
    otpHmacKey: s.OTP_HMAC_KEY,
    /** Keys that codes digested before OTP_HMAC_KEY changed still verify against; nothing new is digested with them. */
    otpHmacKeysPrevious: s.OTP_HMAC_KEYS_PREVIOUS,
    otpEncryptionKey: s.OTP_ENCRYPTION_KEY,
    /** Keys that open what they sealed before OTP_ENCRYPTION_KEY changed, and never seal. */
    otpEncryptionKeysPrevious: s.OTP_ENCRYPTION_KEYS_PREVIOUS,
    signingKeyJwk: s.SIGNING_KEY_JWK,
    /** Signs access tokens (client_credentials JWTs) and OTP validation JWTs; ID tokens stay RS256. */
    accessTokenSigningAlg: s.ACCESS_TOKEN_SIGNING_ALG,
    accessTokenTtlSeconds: s.ACCESS_TOKEN_TTL_SECONDS,
    tokenRevocationCheckSeconds: s.TOKEN_REVOCATION_CHECK_SECONDS,
    signingKeyReloadSeconds: s.SIGNING_KEY_RELOAD_SECONDS,
    signingKeyRotationDays: s.SIGNING_KEY_ROTATION_DAYS,
    clientSecretGraceSeconds: s.CLIENT_SECRET_GRACE_SECONDS,
    /** Lifetimes of what the authorization server issues to users and keeps for them. */
    signIn: Object.freeze({
      refreshTokenTtlSeconds: s.REFRESH_TOKEN_TTL_SECONDS,
      sessionTtlSeconds: s.SIGN_IN_SESSION_TTL_SECONDS,
      interactionTtlSeconds: s.SIGN_IN_INTERACTION_TTL_SECONDS,
    }),
    /** Language of the sign-in pages when neither the app nor the browser names a shipped one. */
    signInDefaultLocale: s.SIGN_IN_DEFAULT_LOCALE,
    shutdownDeadlineMs: s.SHUTDOWN_DEADLINE_MS,
    shutdownDrainWindowMs: s.SHUTDOWN_DRAIN_WINDOW_MS,
    requestDeadlineMs: s.REQUEST_DEADLINE_MS,
    /** Idempotency-Key of the creating requests other than OTP's: how long a key is remembered, how long a secret answer may be given again. */
    idempotency: Object.freeze({
      retentionSeconds: s.IDEMPOTENCY_KEY_RETENTION_SECONDS,
      secretReplaySeconds: s.IDEMPOTENCY_SECRET_REPLAY_SECONDS,
    }),
    workerLockDurationMs: s.WORKER_LOCK_DURATION_MS,
    sweeperIntervalMs: s.SWEEPER_INTERVAL_MS,
    sweeperGraceMs: s.SWEEPER_GRACE_MS,
    sentJournalMaxBacklog: s.SENT_JOURNAL_MAX_BACKLOG,
    /** OTPs per enterprise and rate-limit window sent first-come-first-served (core/platform/queues/dispatch-fairness.ts). */
    dispatchFairShare: s.DISPATCH_FAIR_SHARE,
    metricsPort: s.METRICS_PORT,
    rateLimits: Object.freeze({
      otpPerUser: rateLimit(s.RATE_LIMIT_OTP_PER_USER, s.RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS),
      otpPerClient: rateLimit(s.RATE_LIMIT_OTP_PER_CLIENT, s.RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS),
      validatePerClient: rateLimit(s.RATE_LIMIT_VALIDATE_PER_CLIENT, s.RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS),
      otpPerEnterprise: rateLimit(s.RATE_LIMIT_OTP_PER_ENTERPRISE, s.RATE_LIMIT_OTP_PER_ENTERPRISE_WINDOW_SECONDS),
      notificationsPerEnterprise: rateLimit(
        s.RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE,
        s.RATE_LIMIT_NOTIFICATIONS_PER_ENTERPRISE_WINDOW_SECONDS,
      ),
      notificationsPerUser: rateLimit(s.RATE_LIMIT_NOTIFICATIONS_PER_USER, s.RATE_LIMIT_NOTIFICATIONS_PER_USER_WINDOW_SECONDS),
      notificationsPerClient: rateLimit(s.RATE_LIMIT_NOTIFICATIONS_PER_CLIENT, s.RATE_LIMIT_NOTIFICATIONS_PER_CLIENT_WINDOW_SECONDS),
      enrollmentMessagesPerClient: rateLimit(
        s.RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT,
        s.RATE_LIMIT_ENROLLMENT_MESSAGES_PER_CLIENT_WINDOW_SECONDS,
      ),
      enrollmentMessagesPerEnterprise: rateLimit(
        s.RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE,
        s.RATE_LIMIT_ENROLLMENT_MESSAGES_PER_ENTERPRISE_WINDOW_SECONDS,
      ),
    }),
    /** Failed client authentication at the token, introspection and revocation endpoints (docs/security.md). */
    clientAuthentication: Object.freeze({
      perClientAddress: rateLimit(
        s.RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS,
        s.RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_CLIENT_ADDRESS_WINDOW_SECONDS,
      ),
      perAddress: rateLimit(s.RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS, s.RATE_LIMIT_CLIENT_AUTH_FAILURES_PER_ADDRESS_WINDOW_SECONDS),
    }),
    /** User activation: code lifetime and the throttle of POST /v1/users/activate (docs/security.md). */
    activation: Object.freeze({
      codeTtlSeconds: s.ACTIVATION_CODE_TTL_SECONDS,
      perIp: rateLimit(s.RATE_LIMIT_ACTIVATE_PER_IP, s.RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS),
      maxFailures: s.ACTIVATION_MAX_FAILURES,
      freeFailuresPerAddress: s.ACTIVATION_FREE_FAILURES_PER_ADDRESS,
      freeFailuresPerUser: s.ACTIVATION_FREE_FAILURES_PER_USER,
      maxDelayPerAddressSeconds: s.ACTIVATION_MAX_DELAY_PER_ADDRESS_SECONDS,
      maxDelayPerUserSeconds: s.ACTIVATION_MAX_DELAY_PER_USER_SECONDS,
      failureFloorMs: s.ACTIVATION_FAILURE_FLOOR_MS,
    }),
    /** The sign-in pages (docs/security.md): their throttles, the failure cap, the login code's lifetime. */
    login: Object.freeze({
      perIp: rateLimit(s.RATE_LIMIT_LOGIN_PER_IP, s.RATE_LIMIT_LOGIN_PER_IP_WINDOW_SECONDS),
      startsPerIp: rateLimit(s.RATE_LIMIT_SIGN_IN_STARTS_PER_IP, s.RATE_LIMIT_SIGN_IN_STARTS_PER_IP_WINDOW_SECONDS),
      perUserAddress: rateLimit(s.RATE_LIMIT_LOGIN_PER_USER_ADDRESS, s.RATE_LIMIT_LOGIN_PER_USER_ADDRESS_WINDOW_SECONDS),
      perUser: rateLimit(s.RATE_LIMIT_LOGIN_PER_USER, s.RATE_LIMIT_LOGIN_PER_USER_WINDOW_SECONDS),
      codesPerUserAddress: rateLimit(s.RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS, s.RATE_LIMIT_LOGIN_CODES_PER_USER_ADDRESS_WINDOW_SECONDS),
      codesPerUser: rateLimit(s.RATE_LIMIT_LOGIN_CODES_PER_USER, s.RATE_LIMIT_LOGIN_CODES_PER_USER_WINDOW_SECONDS),
      maxFailures: s.LOGIN_MAX_FAILURES,
      userStepFloorMs: s.LOGIN_USER_STEP_FLOOR_MS,
      codeTtlSeconds: s.LOGIN_CODE_TTL_SECONDS,
      passkeyRegistrationMaxAuthAgeSeconds: s.PASSKEY_REGISTRATION_MAX_AUTH_AGE_SECONDS,
      passkeyRemovalMaxAuthAgeSeconds: s.PASSKEY_REMOVAL_MAX_AUTH_AGE_SECONDS,
      familiarAddressSeconds: s.LOGIN_FAMILIAR_ADDRESS_SECONDS,
    }),
    /** Set when FACE_ANALYZER_URL is given: selfies are also checked by that service. */
    faceAnalyzer:
      s.FACE_ANALYZER_URL === undefined ? undefined : Object.freeze({ url: s.FACE_ANALYZER_URL, timeoutMs: s.FACE_ANALYZER_TIMEOUT_MS }),
    concurrency: Object.freeze({
      dispatch: s.DISPATCH_CONCURRENCY,
      enrollment: s.ENROLLMENT_CONCURRENCY,
      notification: s.NOTIFICATION_CONCURRENCY,
    }),
    /** Notifications: the API's event streams; the worker's expiry sweep, retention, callbacks. */
    notifications: Object.freeze({
      /** Event streams one API process holds. */
      streamsPerProcess: s.NOTIFICATION_STREAMS_PER_PROCESS,
      /** Each enterprise's share of them, in percent (core/notifications/enterprise-shares.ts). */
      streamsEnterpriseSharePercent: s.NOTIFICATION_STREAMS_ENTERPRISE_SHARE_PERCENT,
      /** Requests waiting for an answer (`?wait=`) one API process holds, and each enterprise's share. */
      waitsPerProcess: s.NOTIFICATION_WAITS_PER_PROCESS,
      waitsEnterpriseSharePercent: s.NOTIFICATION_WAITS_ENTERPRISE_SHARE_PERCENT,
      sweepIntervalMs: s.NOTIFICATION_SWEEP_INTERVAL_MS,
      retentionDays: s.NOTIFICATION_RETENTION_DAYS,
      callbackConcurrency: s.NOTIFICATION_CALLBACK_CONCURRENCY,
      callbackConcurrencyPerHost: s.NOTIFICATION_CALLBACK_CONCURRENCY_PER_HOST,
      /** Of those, callbacks of one enterprise in flight to all its hosts (callback-host-slots.ts). */
      callbackConcurrencyPerEnterprise: s.NOTIFICATION_CALLBACK_CONCURRENCY_PER_ENTERPRISE,
      /** A receiver failing this many times in a row is held back this long, then probed. */
      callbackCircuit: { failures: s.NOTIFICATION_CALLBACK_CIRCUIT_FAILURES, coolDownMs: s.NOTIFICATION_CALLBACK_CIRCUIT_COOLDOWN_MS },
      callbackRetryBaseMs: s.NOTIFICATION_CALLBACK_RETRY_BASE_MS,
      callbackTimeoutMs: s.NOTIFICATION_CALLBACK_TIMEOUT_MS,
      /** Where callbacks may go besides public addresses (docs/security.md). */
      callbackAddresses: Object.freeze({
        allowLoopback: s.NOTIFICATION_CALLBACK_ALLOW_LOOPBACK,
        allowedNetworks: Object.freeze(splitList(s.NOTIFICATION_CALLBACK_ALLOWED_NETWORKS ?? '')) as readonly string[],
      }),
    }),
    /** Web Push to the users' browsers (content-free: it only says something is waiting). */
    push: Object.freeze({
      /** The VAPID key pair; unset: one generated once and kept in MongoDB. */
      vapidKeys:
        s.VAPID_PUBLIC_KEY === undefined || s.VAPID_PRIVATE_KEY === undefined
          ? undefined
          : Object.freeze({ publicKey: s.VAPID_PUBLIC_KEY, privateKey: s.VAPID_PRIVATE_KEY }),
      vapidSubject: s.VAPID_SUBJECT ?? (`mailto:${s.EMAIL_FROM}` as string),
      subscriptionsPerUser: s.PUSH_SUBSCRIPTIONS_PER_USER,
      concurrency: s.PUSH_CONCURRENCY,
      /** Of those, pushes in flight for one user and for one enterprise (push-send-slots.ts). */
      concurrencyPerUser: s.PUSH_CONCURRENCY_PER_USER,
      concurrencyPerEnterprise: s.PUSH_CONCURRENCY_PER_ENTERPRISE,
      retryBaseMs: s.PUSH_RETRY_BASE_MS,
      timeoutMs: s.PUSH_TIMEOUT_MS,
      /** Where subscription endpoints may point besides public https addresses. */
      endpointAddresses: Object.freeze({
        allowLoopback: s.PUSH_ENDPOINT_ALLOW_LOOPBACK,
        allowedNetworks: Object.freeze([]) as readonly string[],
      }),
    }),
    /** Set when Twilio credentials are given; otherwise SMS goes to the outbox. */
    twilio: twilio(s, 'TWILIO_'),
    /** A second Twilio account SMS fails over to (docs/operations.md); only with the primary one. */
    twilioSecondary: twilio(s, 'TWILIO_SECONDARY_'),
    /** The countries SMS may go to (ISO codes); undefined: every country. */
    smsAllowedCountries:
      s.SMS_ALLOWED_COUNTRIES === undefined
        ? undefined
        : (Object.freeze(new Set(splitList(s.SMS_ALLOWED_COUNTRIES))) as ReadonlySet<string>),
    /** When a provider counts as failing, so that new messages go to the other one of its channel. */
    providerBreaker: Object.freeze({
      errorPercent: s.PROVIDER_BREAKER_ERROR_PERCENT,
      windowMs: s.PROVIDER_BREAKER_WINDOW_SECONDS * 1000,
      minRequests: s.PROVIDER_BREAKER_MIN_REQUESTS,
      resetMs: s.PROVIDER_BREAKER_RESET_SECONDS * 1000,
    }),
    /** Set when a SendGrid API key is given; otherwise e-mail goes to the outbox. */
    sendgrid:
      s.SENDGRID_API_KEY === undefined
        ? undefined
        : Object.freeze({
            apiKey: s.SENDGRID_API_KEY,
            /** Only for tests and mocks: replaces https://api.sendgrid.com/. */
            apiBaseUrl: s.SENDGRID_API_BASE_URL === undefined ? undefined : (`${s.SENDGRID_API_BASE_URL.replace(/\/$/, '')}/` as string),
          }),
    sendgridWebhookPublicKey: s.SENDGRID_WEBHOOK_PUBLIC_KEY,
    emailFrom: s.EMAIL_FROM,
  });
}

/** Reads, validates and freezes the configuration; throws one ConfigError naming every bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, purpose: SettingsPurpose = 'read'): Config {
  const { values, problems } = readSettings(env, undefined, purpose);
  const redis = readRedisTarget(values);
  const passkeys = readPasskeyConfig(values);
  problems.push(...redis.problems, ...passkeys.problems, ...crossProblems(values));
  if (problems.length > 0 || !redis.target) throw new ConfigError([...new Set(problems)].sort());
  return arrange(values, redis.target, passkeys.config);
}
