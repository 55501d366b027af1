// The JSON Schema every process validates its environment against at boot.
// Values arrive as strings; Ajv coerces the numeric and boolean ones.
export const configSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['NODE_ENV', 'PORT', 'LOG_LEVEL', 'MONGODB_URI', 'REDIS_URL', 'PUBLIC_URL'],
  properties: {
    NODE_ENV: { enum: ['development', 'test', 'production'] },
    PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    HOST: { type: 'string', minLength: 1 },
    LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    MONGODB_URI: { type: 'string', pattern: '^mongodb(\\+srv)?://' },
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    QUEUE_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_:-]{1,64}$' },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^/]+(/.*)?$' },
    ADMIN_TOKEN: { type: 'string', minLength: 24 },
    TRUST_PROXY: { type: 'string', pattern: '^(false|true|[0-9]{1,2}|[0-9a-fA-F.:/, ]+)$' },
    BODY_LIMIT: { type: 'string', pattern: '^[0-9]+(b|kb|mb)$' },
    OTP_HMAC_KEY: { type: 'string', pattern: '^[A-Za-z0-9+/=_-]{43,}$' },
    OTP_ENCRYPTION_KEY: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    SIGNING_KEY_JWK: { type: 'string', minLength: 2 },
    ACCESS_TOKEN_TTL_SECONDS: { type: 'integer', minimum: 60, maximum: 86400 },
    SHUTDOWN_DEADLINE_MS: { type: 'integer', minimum: 1000, maximum: 600000 },
    DISPATCH_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 1000 },
    ENROLLMENT_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 1000 },
    NOTIFICATION_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 1000 },
  },
} as const;
