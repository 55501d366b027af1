// The signed-in user's passkeys (WebAuthn): register one on this device, list them, remove one.
// The browser's WebAuthn API makes the passkey; the service checks it and keeps its public key.
import { asSvcIdentityError, SvcIdentityError, type OperationName } from './errors.js';
import { ResultCode, type ResultCodeValue } from './result-codes.js';

export interface PasskeysOptions {
  /** The service's public URL, e.g. https://id.example.com */
  serviceUrl: string;
  /** The user's access token (SignIn.accessTokenProvider gives one that refreshes itself). */
  getAccessToken: () => string | Promise<string>;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Defaults to the browser's navigator.credentials. */
  credentials?: Pick<CredentialsContainer, 'create'>;
}

/** A passkey as the service lists it (no key material). */
export interface PasskeyInfo {
  id: string;
  name: string;
  credentialId: string;
  transports: string[];
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  aaguid: string;
  createdAt: string;
  lastUsedAt?: string;
}

interface CreationOptionsJSON {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: { type: 'public-key'; alg: number }[];
  timeout?: number;
  attestation?: AttestationConveyancePreference;
  excludeCredentials?: { id: string; type: 'public-key'; transports?: string[] }[];
  authenticatorSelection?: AuthenticatorSelectionCriteria;
}

const toBytes = (value: string): Uint8Array<ArrayBuffer> => {
  const b64 = value.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(b64 + '==='.slice((b64.length + 3) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
};

const toText = (buffer: ArrayBuffer): string => {
  let raw = '';
  for (const byte of new Uint8Array(buffer)) raw += String.fromCharCode(byte);
  return btoa(raw).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

export class Passkeys {
  private readonly baseUrl: string;

  constructor(private readonly options: PasskeysOptions) {
    this.baseUrl = options.serviceUrl.replace(/\/+$/, '');
  }

  /**
   * Makes a passkey on this device for the signed-in user (the browser asks the person to confirm
   * with their screen lock or security key) and registers it; `name` is how the user will know it.
   */
  async register(name?: string): Promise<PasskeyInfo> {
    const operation = 'RegisterPasskey';
    const options = await this.call<CreationOptionsJSON>(operation, 'POST', '/v1/me/passkeys/registration-options');
    const credentials = this.options.credentials ?? globalThis.navigator.credentials;
    let credential: PublicKeyCredential | null;
    try {
      credential = (await credentials.create({
        publicKey: {
          ...options,
          challenge: toBytes(options.challenge),
          user: { ...options.user, id: toBytes(options.user.id) },
          excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({
            type: c.type,
            id: toBytes(c.id),
            transports: c.transports as AuthenticatorTransport[] | undefined,
          })),
        },
      })) as PublicKeyCredential | null;
    } catch (err) {
      const known = (err as { name?: string }).name;
      const message =
        known === 'InvalidStateError'
          ? 'this device already holds a passkey for this account'
          : known === 'NotAllowedError'
            ? 'no passkey was made: the request was cancelled, timed out or is not allowed here'
            : `no passkey was made: ${err instanceof Error ? err.message : String(err)}`;
      throw new SvcIdentityError({ operation, kind: 'refused', code: ResultCode.INVALID_ARGUMENTS, message, cause: err });
    }
    if (!credential) throw new SvcIdentityError({ operation, kind: 'refused', message: 'no passkey was made' });
    const response = credential.response as AuthenticatorAttestationResponse;
    return this.call<PasskeyInfo>(operation, 'POST', '/v1/me/passkeys', {
      ...(name === undefined ? {} : { name }),
      credential: {
        id: credential.id,
        rawId: toText(credential.rawId),
        type: credential.type,
        clientExtensionResults: {},
        response: {
          clientDataJSON: toText(response.clientDataJSON),
          attestationObject: toText(response.attestationObject),
          transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
        },
      },
    });
  }

  /** The signed-in user's passkeys, oldest first. */
  list(): Promise<PasskeyInfo[]> {
    return this.call<PasskeyInfo[]>('ListPasskeys', 'GET', '/v1/me/passkeys');
  }

  /**
   * Removes one of the user's passkeys: it can no longer sign in. Like `register`, it needs a
   * recent sign-in: an older one is refused with `details.maxAge` for `SignIn.start`.
   */
  async remove(passkeyId: string): Promise<void> {
    await this.call<unknown>('RemovePasskey', 'DELETE', `/v1/me/passkeys/${encodeURIComponent(passkeyId)}`);
  }

  private async call<Data>(operation: OperationName, method: string, path: string, body?: unknown): Promise<Data> {
    let res: Response;
    try {
      const token = await this.options.getAccessToken();
      res = await (this.options.fetch ?? fetch)(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw asSvcIdentityError(operation, err);
    }
    let parsed: Record<string, unknown>;
    try {
      const text = await res.text();
      parsed = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    } catch (err) {
      throw new SvcIdentityError({
        operation,
        kind: 'network',
        message: `the service answered ${res.status} with a body that is not JSON`,
        cause: err,
      });
    }
    if (res.ok) return parsed as Data;
    const blocked = parsed.error === 'user_blocked';
    throw new SvcIdentityError({
      operation,
      kind: res.status === 401 ? 'sign-in-again' : res.status >= 500 ? 'network' : 'refused',
      code:
        serviceCode(parsed) ??
        (blocked ? ResultCode.USER_BLOCKED : res.status >= 500 ? ResultCode.UNKNOWN_ERROR : ResultCode.INVALID_ARGUMENTS),
      message: String(parsed.message ?? parsed.error_description ?? `the service answered ${res.status}`),
      status: res.status,
      details: refusalDetails(parsed),
      cause: parsed,
    });
  }
}

/**
 * What an app acts on in a refusal: its `error`, and for a sign-in too old to add or remove a
 * passkey (`insufficient_user_authentication`, RFC 9470) the `maxAge` to pass to `SignIn.start`.
 */
function refusalDetails(body: Record<string, unknown>): Record<string, unknown> {
  return {
    ...(typeof body.error === 'string' ? { error: body.error } : {}),
    ...(typeof body.max_age === 'number' ? { maxAge: body.max_age } : {}),
  };
}

/** The client library code the service put on its refusal (every user API refusal has one). */
function serviceCode(body: Record<string, unknown>): Exclude<ResultCodeValue, 0> | undefined {
  const { code } = body;
  return code === ResultCode.INVALID_ARGUMENTS || code === ResultCode.UNKNOWN_ERROR || code === ResultCode.USER_BLOCKED ? code : undefined;
}
