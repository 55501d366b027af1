import { withPreviousKeys } from './previous-keys.js';

/** Server secrets of the OTP digest (HMAC key) and of PLAIN storage (AES-256-GCM key). */
export interface OtpKeys {
  /** HMAC key for SHA_* / SHA_HEX_* digests (and activation codes); codes digested with a previous key still verify. */
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
  otpHmacKeysPrevious?: string | undefined;
  otpEncryptionKey: string | undefined;
  otpEncryptionKeysPrevious?: string | undefined;
}): OtpKeys {
  const hmacKey = withPreviousKeys(hmacKeyFrom(config.otpHmacKey, 'OTP_HMAC_KEY'), previousHmacKeys(config.otpHmacKeysPrevious));
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

function hmacKeyFrom(text: string | undefined, setting: string): Buffer {
  if (!text || !/^[A-Za-z0-9+/=_-]+$/.test(text)) throw new Error(`${setting} must be set (base64url)`);
  // Node's base64url decoder also accepts the +/ alphabet, which config.schema.ts allows.
  const key = Buffer.from(text, 'base64url');
  if (key.length < MIN_HMAC_KEY_BYTES) throw new Error(`${setting} must decode to at least ${MIN_HMAC_KEY_BYTES} bytes`);
  return key;
}

/** OTP_HMAC_KEYS_PREVIOUS (comma-separated, each as OTP_HMAC_KEY) as keys; unset or empty: none. */
export function previousHmacKeys(list: string | undefined): Buffer[] {
  return (list ?? '')
    .split(',')
    .filter((text) => text !== '')
    .map((text) => hmacKeyFrom(text, 'OTP_HMAC_KEYS_PREVIOUS'));
}
