import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { ExternalSigningKey } from 'oidc-provider';
import type { SigningKey } from '../../core/auth/signing-key.service.js';

/**
 * An ECDSA signature as JWS carries it (r || s, each `size` bytes, RFC 7518 section 3.4) from the
 * DER form node:crypto gives (SEQUENCE of two INTEGERs, each minimal and sign-padded).
 */
export function derToP1363(der: Buffer, size: number): Buffer {
  let offset = der[1] === 0x81 ? 3 : 2; // past SEQUENCE and its length (one or two bytes)
  const out = Buffer.alloc(size * 2);
  for (let part = 0; part < 2; part++) {
    const length = der[offset + 1] as number;
    let value = der.subarray(offset + 2, offset + 2 + length);
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    value.copy(out, size * (part + 1) - value.length);
    offset += 2 + length;
  }
  return out;
}

/**
 * One of our signing keys handed to oidc-provider as an external signing key, so a token is
 * signed by one synchronous `crypto.sign` instead of jose's WebCrypto path: for ES256 that halves
 * the signature's CPU (about 0.05 ms against 0.08-0.11 ms), which every client_credentials grant pays.
 */
export class NodeSigningKey extends ExternalSigningKey {
  readonly #kid: string;
  readonly #alg: string;
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #p1363: boolean;

  constructor(key: SigningKey) {
    super();
    this.#kid = key.kid;
    this.#alg = key.alg;
    this.#privateKey = createPrivateKey({ key: key.privateJwk as JWK & { kty: string }, format: 'jwk' });
    this.#publicKey = createPublicKey(this.#privateKey);
    // JWS carries an ECDSA signature as r || s (IEEE P1363), not DER.
    this.#p1363 = key.alg === 'ES256';
  }

  override get kid(): string {
    return this.#kid;
  }

  override get alg(): string {
    return this.#alg;
  }

  override keyObject(): KeyObject {
    return this.#publicKey;
  }

  override sign(data: Buffer): Promise<Buffer> {
    // The KeyObject itself, not `{ key, dsaEncoding: 'ieee-p1363' }`: on Node 24 an options
    // object doubles the cost of crypto.sign (about 53 µs against 24 µs for P-256).
    const signature = sign('sha256', data, this.#privateKey);
    return Promise.resolve(this.#p1363 ? derToP1363(signature, 32) : signature);
  }
}
