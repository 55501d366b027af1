import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

// Authenticator data flags (WebAuthn §6.1).
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/**
 * An authenticator in the test process: ES256 passkeys with attestation `none`, answers built
 * byte for byte as WebAuthn lays them out (CBOR, authenticator data, DER signature), so the
 * service's checks run on real answers. `userVerified: false` or a counter set back lets tests
 * make the answers the service must refuse.
 */
export class SoftwareAuthenticator {
  readonly credentials: Credential[] = [];

  constructor(private readonly origin: string) {}

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const head = Buffer.alloc(37);
    sha256(rpId).copy(head, 0);
    head[32] = flags;
    head.writeUInt32BE(counter, 33);
    return attested ? Buffer.concat([head, attested]) : head;
  }

  private clientData(type: string, challenge: string, origin: string): string {
    return b64(Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })));
  }

  /** navigator.credentials.create with these options (RegistrationResponseJSON). */
  create(
    options: { challenge: string; rp: { id: string }; user: { id: string } },
    overrides: { origin?: string; userVerified?: boolean; challenge?: string; rpId?: string } = {},
  ): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, isoBase64URL.toBuffer(jwk.x as string)],
        [-3, isoBase64URL.toBuffer(jwk.y as string)],
      ]),
    );
    const id = randomBytes(32);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, Buffer.from(cose)]);
    const rpId = overrides.rpId ?? options.rp.id;
    const flags = UP | AT | (overrides.userVerified === false ? 0 : UV);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', this.authData(rpId, flags, 0, attested)],
      ]),
    );
    this.credentials.push({ id, privateKey, publicKey, rpId, userHandle: options.user.id, counter: 0 });
    return {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin),
        attestationObject: b64(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get with a discoverable credential (AuthenticationResponseJSON). */
  get(
    challenge: string,
    overrides: { credential?: Credential; origin?: string; userVerified?: boolean; counter?: number } = {},
  ): Record<string, string | Record<string, unknown>> {
    const credential = overrides.credential ?? this.credentials[this.credentials.length - 1];
    if (!credential) throw new Error('no passkey on this authenticator');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const authData = this.authData(credential.rpId, UP | (overrides.userVerified === false ? 0 : UV), credential.counter);
    const clientDataJSON = this.clientData('webauthn.get', challenge, overrides.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(isoBase64URL.toBuffer(clientDataJSON))]), credential.privateKey);
    return {
      id: b64(credential.id),
      rawId: b64(credential.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON,
        authenticatorData: b64(authData),
        signature: b64(signature),
        userHandle: credential.userHandle,
      },
    };
  }
}
