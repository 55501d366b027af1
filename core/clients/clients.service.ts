import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Connection } from 'mongoose';
import { ValidationError } from '../errors/app-error.js';
import { generateClientSecret, hashClientSecret } from './client-secret.js';
import { insertClient, type Client, type ClientScope } from './clients.repository.js';

export interface RegisterClientInput {
  name: string;
  scopes: ClientScope[];
  allowedIps?: string[];
  redirectUris?: string[];
  public?: boolean;
  /** Default true: the consent page is skipped for the operator's own apps. */
  firstParty?: boolean;
}

export interface RegisteredClient {
  client: Client;
  /** Shown to the caller once; only its hash is stored. Absent for public clients. */
  clientSecret?: string;
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
export async function registerClient(connection: Connection, input: RegisterClientInput): Promise<RegisteredClient> {
  const isPublic = input.public === true;
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  if (isPublic && redirectUris.length === 0) {
    throw new ValidationError('Invalid field redirectUris: a public client needs at least one redirect URI');
  }
  const clientSecret = isPublic ? undefined : generateClientSecret();
  const client = await insertClient(connection, {
    clientId: randomUUID(),
    name: input.name,
    scopes: [...new Set(input.scopes)],
    allowedIps: [...new Set((input.allowedIps ?? []).map(normalizeCidr))],
    redirectUris,
    isPublic,
    firstParty: input.firstParty !== false,
    secretHash: clientSecret === undefined ? null : hashClientSecret(clientSecret),
    createdAt: new Date(),
  });
  return clientSecret === undefined ? { client } : { client, clientSecret };
}
