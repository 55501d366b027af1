import type { JWK } from 'jose';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';

/**
 * A signing key as MongoDB keeps it: the public half in clear (it is published anyway), the
 * private JWK sealed with the server encryption key (AES-256-GCM, bound to the key's stored
 * name). A copy of the database alone then cannot sign tokens, which would let its holder call
 * every enterprise's API as any client.
 */
export interface SealedSigningJwk {
  publicJwk: JWK;
  privateJwkBox: string;
}

/** What a stored signing key's seal is bound to: its stored name. */
export const signingKeyBoxContext = (name: string) => `signing-key:${name}`;
const boxContext = signingKeyBoxContext;

export function sealSigningJwk(name: string, privateJwk: JWK, publicJwk: JWK, encryptionKey: Buffer): SealedSigningJwk {
  return { publicJwk, privateJwkBox: encryptSecret(JSON.stringify(privateJwk), encryptionKey, boxContext(name)) };
}

/**
 * A stored signing key that this process's OTP_ENCRYPTION_KEY does not open: another key sealed it
 * (the setting was changed, or one process was given another value), or the document was altered.
 */
export class SigningKeySealedWithAnotherKeyError extends Error {
  constructor(name: string) {
    super(
      `the signing key ${name} stored in MongoDB (server_secrets) does not open with this OTP_ENCRYPTION_KEY (nor a key of OTP_ENCRYPTION_KEYS_PREVIOUS): it was sealed with another key (give every process the key the service started with, or list it in OTP_ENCRYPTION_KEYS_PREVIOUS while rotating) or the stored document was altered`,
    );
    this.name = 'SigningKeySealedWithAnotherKeyError';
  }
}

/** The private JWK of a sealed key; throws SigningKeySealedWithAnotherKeyError when the box was sealed with another key or under another name. */
export function openSigningJwk(name: string, sealed: SealedSigningJwk, encryptionKey: Buffer): JWK {
  let opened: string;
  try {
    opened = decryptSecret(sealed.privateJwkBox, encryptionKey, boxContext(name));
  } catch {
    throw new SigningKeySealedWithAnotherKeyError(name);
  }
  return JSON.parse(opened) as JWK;
}

export function isSealedSigningJwk(value: unknown): value is SealedSigningJwk {
  return typeof value === 'object' && value !== null && typeof (value as { privateJwkBox?: unknown }).privateJwkBox === 'string';
}
