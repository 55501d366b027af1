import AjvModule from 'ajv';
import { configSchema } from './config.schema.js';

const Ajv = AjvModule.default;

export interface Config {
  readonly nodeEnv: 'development' | 'test' | 'production';
  readonly port: number;
  readonly host: string;
  readonly logLevel: string;
  readonly mongodbUri: string;
  readonly redisUrl: string;
  readonly queuePrefix: string;
  readonly publicUrl: string;
  readonly adminToken: string | undefined;
  readonly trustProxy: boolean | number | string;
  readonly bodyLimit: string;
  readonly otpHmacKey: string | undefined;
  readonly otpEncryptionKey: string | undefined;
  readonly signingKeyJwk: string | undefined;
  readonly accessTokenTtlSeconds: number;
  readonly shutdownDeadlineMs: number;
  /** How long a worker's job lock lives; a dead worker's job is retried after about this long. */
  readonly workerLockDurationMs: number;
  readonly sweeperIntervalMs: number;
  readonly sweeperGraceMs: number;
  /** Sends journaled but not yet on their rows past which dispatch workers pause sending. */
  readonly sentJournalMaxBacklog: number;
  readonly rateLimits: {
    readonly otpPerUser: RateLimit;
    readonly otpPerClient: RateLimit;
    readonly validatePerClient: RateLimit;
  };
  /** User activation (D20): code lifetime and abuse limits of POST /v1/users/activate. */
  readonly activation: {
    readonly codeTtlSeconds: number;
    readonly perUser: RateLimit;
    readonly perIp: RateLimit;
  };
  /** Set when FACE_ANALYZER_URL is given: selfies are also checked by that service (D21). */
  readonly faceAnalyzer: { readonly url: string; readonly timeoutMs: number } | undefined;
  readonly concurrency: { readonly dispatch: number; readonly enrollment: number; readonly notification: number };
  /** The notification worker: expiry sweep, retention of ended notifications, callbacks. */
  readonly notifications: {
    readonly sweepIntervalMs: number;
    readonly retentionDays: number;
    readonly callbackConcurrency: number;
    readonly callbackRetryBaseMs: number;
    readonly callbackTimeoutMs: number;
  };
  /** Set when Twilio credentials are given; otherwise SMS goes to the outbox. */
  readonly twilio: TwilioConfig | undefined;
  /** Set when a SendGrid API key is given; otherwise e-mail goes to the outbox. */
  readonly sendgrid: SendgridConfig | undefined;
  /** Base64 DER public key verifying SendGrid event webhooks; without it they are refused. */
  readonly sendgridWebhookPublicKey: string | undefined;
  readonly emailFrom: string;
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
  ACCESS_TOKEN_TTL_SECONDS: '3600',
  SHUTDOWN_DEADLINE_MS: '25000',
  DISPATCH_CONCURRENCY: '10',
  ENROLLMENT_CONCURRENCY: '5',
  // Expiry jobs are one small conditional write each: many in flight keep a burst of expiries on time.
  NOTIFICATION_CONCURRENCY: '50',
  NOTIFICATION_SWEEP_INTERVAL_MS: '1000',
  NOTIFICATION_RETENTION_DAYS: '90',
  NOTIFICATION_CALLBACK_CONCURRENCY: '10',
  NOTIFICATION_CALLBACK_RETRY_BASE_MS: '1000',
  NOTIFICATION_CALLBACK_TIMEOUT_MS: '10000',
  EMAIL_FROM: 'no-reply@example.com',
  WORKER_LOCK_DURATION_MS: '30000',
  SWEEPER_INTERVAL_MS: '15000',
  SWEEPER_GRACE_MS: '60000',
  SENT_JOURNAL_MAX_BACKLOG: '100000',
  RATE_LIMIT_OTP_PER_USER: '5',
  RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS: '600',
  RATE_LIMIT_OTP_PER_CLIENT: '1000',
  RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS: '60',
  RATE_LIMIT_VALIDATE_PER_CLIENT: '3000',
  RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS: '60',
  ACTIVATION_CODE_TTL_SECONDS: '604800',
  RATE_LIMIT_ACTIVATE_PER_USER: '10',
  RATE_LIMIT_ACTIVATE_PER_USER_WINDOW_SECONDS: '900',
  RATE_LIMIT_ACTIVATE_PER_IP: '60',
  RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS: '60',
  FACE_ANALYZER_TIMEOUT_MS: '5000',
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

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value;
}

// A half-configured provider would silently fall back to the outbox; refuse to start instead.
function providerProblems(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const hasSid = raw.TWILIO_ACCOUNT_SID !== undefined;
  const hasToken = raw.TWILIO_AUTH_TOKEN !== undefined;
  if (hasSid !== hasToken) problems.push(`${hasSid ? 'TWILIO_AUTH_TOKEN' : 'TWILIO_ACCOUNT_SID'}: is required with ${hasSid ? 'TWILIO_ACCOUNT_SID' : 'TWILIO_AUTH_TOKEN'}`);
  if (hasSid && hasToken && raw.TWILIO_FROM === undefined && raw.TWILIO_MESSAGING_SERVICE_SID === undefined) {
    problems.push('TWILIO_FROM: TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID is required with Twilio credentials');
  }
  return problems;
}

function readTwilio(raw: Record<string, unknown>): TwilioConfig | undefined {
  if (raw.TWILIO_ACCOUNT_SID === undefined || raw.TWILIO_AUTH_TOKEN === undefined) return undefined;
  return Object.freeze({
    accountSid: raw.TWILIO_ACCOUNT_SID as string,
    authToken: raw.TWILIO_AUTH_TOKEN as string,
    from: raw.TWILIO_FROM as string | undefined,
    messagingServiceSid: raw.TWILIO_MESSAGING_SERVICE_SID as string | undefined,
    apiBaseUrl: (raw.TWILIO_API_BASE_URL as string | undefined)?.replace(/\/$/, ''),
  });
}

function readSendgrid(raw: Record<string, unknown>): SendgridConfig | undefined {
  if (raw.SENDGRID_API_KEY === undefined) return undefined;
  const base = raw.SENDGRID_API_BASE_URL as string | undefined;
  return Object.freeze({ apiKey: raw.SENDGRID_API_KEY as string, apiBaseUrl: base === undefined ? undefined : `${base.replace(/\/$/, '')}/` });
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
    for (const error of validate.errors ?? []) {
      const key = error.instancePath.replace(/^\//, '') || String(error.params.missingProperty ?? '');
      problems.push(`${key}: ${error.message ?? 'is invalid'}`);
    }
  }
  if (raw.SIGNING_KEY_JWK !== undefined && !isPrivateRsaJwk(raw.SIGNING_KEY_JWK as string)) {
    problems.push('SIGNING_KEY_JWK: must be a private RSA JWK as JSON (kty RSA with n, e, d)');
  }
  if (raw.NODE_ENV === 'production') {
    for (const key of PRODUCTION_SECRETS) if (raw[key] === undefined) problems.push(`${key}: is required in production`);
  }
  problems.push(...providerProblems(raw));
  if (problems.length > 0) throw new ConfigError([...new Set(problems)].sort());

  return Object.freeze({
    nodeEnv: raw.NODE_ENV as Config['nodeEnv'],
    port: raw.PORT as number,
    host: raw.HOST as string,
    logLevel: raw.LOG_LEVEL as string,
    mongodbUri: raw.MONGODB_URI as string,
    redisUrl: raw.REDIS_URL as string,
    queuePrefix: raw.QUEUE_PREFIX as string,
    publicUrl: (raw.PUBLIC_URL as string).replace(/\/$/, ''),
    adminToken: raw.ADMIN_TOKEN as string | undefined,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY as string),
    bodyLimit: raw.BODY_LIMIT as string,
    otpHmacKey: raw.OTP_HMAC_KEY as string | undefined,
    otpEncryptionKey: raw.OTP_ENCRYPTION_KEY as string | undefined,
    signingKeyJwk: raw.SIGNING_KEY_JWK as string | undefined,
    accessTokenTtlSeconds: raw.ACCESS_TOKEN_TTL_SECONDS as number,
    shutdownDeadlineMs: raw.SHUTDOWN_DEADLINE_MS as number,
    workerLockDurationMs: raw.WORKER_LOCK_DURATION_MS as number,
    sweeperIntervalMs: raw.SWEEPER_INTERVAL_MS as number,
    sweeperGraceMs: raw.SWEEPER_GRACE_MS as number,
    sentJournalMaxBacklog: raw.SENT_JOURNAL_MAX_BACKLOG as number,
    rateLimits: Object.freeze({
      otpPerUser: Object.freeze({ points: raw.RATE_LIMIT_OTP_PER_USER as number, durationSeconds: raw.RATE_LIMIT_OTP_PER_USER_WINDOW_SECONDS as number }),
      otpPerClient: Object.freeze({ points: raw.RATE_LIMIT_OTP_PER_CLIENT as number, durationSeconds: raw.RATE_LIMIT_OTP_PER_CLIENT_WINDOW_SECONDS as number }),
      validatePerClient: Object.freeze({ points: raw.RATE_LIMIT_VALIDATE_PER_CLIENT as number, durationSeconds: raw.RATE_LIMIT_VALIDATE_PER_CLIENT_WINDOW_SECONDS as number }),
    }),
    activation: Object.freeze({
      codeTtlSeconds: raw.ACTIVATION_CODE_TTL_SECONDS as number,
      perUser: Object.freeze({ points: raw.RATE_LIMIT_ACTIVATE_PER_USER as number, durationSeconds: raw.RATE_LIMIT_ACTIVATE_PER_USER_WINDOW_SECONDS as number }),
      perIp: Object.freeze({ points: raw.RATE_LIMIT_ACTIVATE_PER_IP as number, durationSeconds: raw.RATE_LIMIT_ACTIVATE_PER_IP_WINDOW_SECONDS as number }),
    }),
    faceAnalyzer:
      raw.FACE_ANALYZER_URL === undefined ? undefined : Object.freeze({ url: raw.FACE_ANALYZER_URL as string, timeoutMs: raw.FACE_ANALYZER_TIMEOUT_MS as number }),
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
    }),
    twilio: readTwilio(raw),
    sendgrid: readSendgrid(raw),
    sendgridWebhookPublicKey: raw.SENDGRID_WEBHOOK_PUBLIC_KEY as string | undefined,
    emailFrom: raw.EMAIL_FROM as string,
  });
}
