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
  readonly concurrency: { readonly dispatch: number; readonly enrollment: number; readonly notification: number };
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
  NOTIFICATION_CONCURRENCY: '5',
};

// Secrets that must be given explicitly in production (no generated or default value).
const PRODUCTION_SECRETS = ['ADMIN_TOKEN', 'OTP_HMAC_KEY', 'OTP_ENCRYPTION_KEY'];

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value;
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
  if (raw.NODE_ENV === 'production') {
    for (const key of PRODUCTION_SECRETS) if (raw[key] === undefined) problems.push(`${key}: is required in production`);
  }
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
    concurrency: Object.freeze({
      dispatch: raw.DISPATCH_CONCURRENCY as number,
      enrollment: raw.ENROLLMENT_CONCURRENCY as number,
      notification: raw.NOTIFICATION_CONCURRENCY as number,
    }),
  });
}
