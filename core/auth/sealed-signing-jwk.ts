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

const boxContext = (name: string) => `signing-key:${name}`;

export function sealSigningJwk(name: string, privateJwk: JWK, publicJwk: JWK, encryptionKey: Buffer): SealedSigningJwk {
  return { publicJwk, privateJwkBox: encryptSecret(JSON.stringify(privateJwk), encryptionKey, boxContext(name)) };
}

/** The private JWK of a sealed key; throws when the box was sealed with another key or under another name. */
export function openSigningJwk(name: string, sealed: SealedSigningJwk, encryptionKey: Buffer): JWK {
  return JSON.parse(decryptSecret(sealed.privateJwkBox, encryptionKey, boxContext(name))) as JWK;
}

export function isSealedSigningJwk(value: unknown): value is SealedSigningJwk {
  return typeof value === 'object' && value !== null && typeof (value as { privateJwkBox?: unknown }).privateJwkBox === 'string';
}
