import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Connection } from 'mongoose';
import { ValidationError } from '../errors/app-error.js';
import { generateCallbackSecret, sealCallbackSecret } from './callback-secret.js';
import { generateClientSecret, hashClientSecret } from './client-secret.js';
import { insertClient, type Client, type ClientScope } from './clients.repository.js';

export interface RegisterClientInput {
  name: string;
  scopes: ClientScope[];
  allowedIps?: string[];
  redirectUris?: string[];
  public?: boolean;
}

export interface RegisteredClient {
  client: Client;
  /** Shown to the caller once; only its hash is stored. Absent for public clients. */
  clientSecret?: string;
  /** Signs notification callbacks; shown once, stored encrypted. Absent without an encryption key. */
  callbackSecret?: string;
}

/** `10.0.0.0/8` stays as is; a bare address becomes a one-address range (`/32`, `/128`). */
export function normalizeCidr(value: string): string {
  try {
    if (value.includes('/')) {
      const [range, bits] = ipaddr.parseCIDR(value);
      return `${range.toString()}/${bits}`;
    }
    const address = ipaddr.parse(value);
    return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    throw new ValidationError(`Invalid field allowedIps: '${value}' is not an IP address or CIDR range`);
  }
}

/** Registers a client: random id, random secret stored hashed, CIDRs normalised. */
export async function registerClient(connection: Connection, input: RegisterClientInput, keys: { encryptionKey?: Buffer } = {}): Promise<RegisteredClient> {
  const isPublic = input.public === true;
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  if (isPublic && redirectUris.length === 0) {
    throw new ValidationError('Invalid field redirectUris: a public client needs at least one redirect URI');
  }
  const clientSecret = isPublic ? undefined : generateClientSecret();
  const clientId = randomUUID();
  const callbackSecret = isPublic || !keys.encryptionKey ? undefined : generateCallbackSecret();
  const client = await insertClient(connection, {
    clientId,
    name: input.name,
    scopes: [...new Set(input.scopes)],
    allowedIps: [...new Set((input.allowedIps ?? []).map(normalizeCidr))],
    redirectUris,
    isPublic,
    secretHash: clientSecret === undefined ? null : hashClientSecret(clientSecret),
    callbackSecretEncrypted: callbackSecret === undefined || !keys.encryptionKey ? null : sealCallbackSecret(clientId, callbackSecret, keys.encryptionKey),
    createdAt: new Date(),
  });
  return { client, ...(clientSecret === undefined ? {} : { clientSecret }), ...(callbackSecret === undefined ? {} : { callbackSecret }) };
}
