import { withPreviousKeys } from './previous-keys.js';

/** Server secrets of the OTP digest (HMAC key) and of PLAIN storage (AES-256-GCM key). */
export interface OtpKeys {
  /** HMAC key for SHA_* / SHA_HEX_* digests (and activation codes). */
  readonly hmacKey: Buffer;
  /** AES-256-GCM key for PLAIN codes and codes carried in job data; also opens with the previous keys (never seals with them). */
  readonly encryptionKey: Buffer;
}

const MIN_HMAC_KEY_BYTES = 32;

/**
 * Decodes the two keys from config (OTP_HMAC_KEY base64url, OTP_ENCRYPTION_KEY 64 hex), failing
 * loudly: a short or missing key would silently weaken every stored digest.
 */
export function otpKeysFromConfig(config: {
  otpHmacKey: string | undefined;
  otpEncryptionKey: string | undefined;
  otpEncryptionKeysPrevious?: string | undefined;
}): OtpKeys {
  if (!config.otpHmacKey || !/^[A-Za-z0-9+/=_-]+$/.test(config.otpHmacKey)) throw new Error('OTP_HMAC_KEY must be set (base64url)');
  // Node's base64url decoder also accepts the +/ alphabet, which config.schema.ts allows.
  const hmacKey = Buffer.from(config.otpHmacKey, 'base64url');
  if (hmacKey.length < MIN_HMAC_KEY_BYTES) throw new Error(`OTP_HMAC_KEY must decode to at least ${MIN_HMAC_KEY_BYTES} bytes`);
  if (!config.otpEncryptionKey || !/^[0-9a-fA-F]{64}$/.test(config.otpEncryptionKey)) {
    throw new Error('OTP_ENCRYPTION_KEY must be 64 hex characters');
  }
  const encryptionKey = withPreviousKeys(
    Buffer.from(config.otpEncryptionKey, 'hex'),
    previousEncryptionKeys(config.otpEncryptionKeysPrevious),
  );
  return Object.freeze({ hmacKey, encryptionKey });
}

/** OTP_ENCRYPTION_KEYS_PREVIOUS (comma-separated, 64 hex each) as keys; unset or empty: none. */
export function previousEncryptionKeys(list: string | undefined): Buffer[] {
  const keys = (list ?? '').split(',').filter((hex) => hex !== '');
  if (keys.some((hex) => !/^[0-9a-fA-F]{64}$/.test(hex)))
    throw new Error('OTP_ENCRYPTION_KEYS_PREVIOUS must be keys of 64 hex characters separated by commas');
  return keys.map((hex) => Buffer.from(hex, 'hex'));
}
