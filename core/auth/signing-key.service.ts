import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Connection } from 'mongoose';
import type { Config } from '../platform/config/config.js';
import { createServerSecretsRepository } from './server-secrets.repository.js';

export const SIGNING_ALG = 'RS256';

export interface SigningKey {
  kid: string;
  alg: typeof SIGNING_ALG;
  /** Private JWK: give only to the authorization server (and other token signers). */
  privateJwk: JWK;
  /** Public half, as published at the JWKS endpoint. */
  publicJwk: JWK;
}

const PUBLIC_RSA_MEMBERS = ['kty', 'n', 'e', 'kid', 'alg', 'use'] as const;

function publicPart(jwk: JWK): JWK {
  const out: JWK = {};
  for (const member of PUBLIC_RSA_MEMBERS) if (jwk[member] !== undefined) out[member] = jwk[member];
  return out;
}

async function completeJwk(jwk: JWK): Promise<JWK> {
  if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string') throw new Error('SIGNING_KEY_JWK must be a private RSA JWK');
  // Without a kid the thumbprint (RFC 7638) is a stable one: restarts keep the same kid.
  const kid = jwk.kid ?? (await calculateJwkThumbprint(jwk));
  return { ...jwk, kid, alg: SIGNING_ALG, use: 'sig' };
}

async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  return completeJwk(await exportJWK(privateKey));
}

function toSigningKey(jwk: JWK): SigningKey {
  return { kid: jwk.kid as string, alg: SIGNING_ALG, privateJwk: jwk, publicJwk: publicPart(jwk) };
}

/** The key that signs access tokens: SIGNING_KEY_JWK when set, else one generated once and kept in MongoDB. */
export async function loadSigningKey(connection: Connection, config: Pick<Config, 'signingKeyJwk'>): Promise<SigningKey> {
  if (config.signingKeyJwk) return toSigningKey(await completeJwk(JSON.parse(config.signingKeyJwk) as JWK));
  return toSigningKey(await createServerSecretsRepository(connection).ensureServerSecret('access-token-signing-jwk', generateSigningJwk));
}

const loaded = new WeakMap<Connection, Promise<SigningKey>>();

/** loadSigningKey, once per connection (the API's process-wide copy). */
export function getSigningKey(connection: Connection, config: Pick<Config, 'signingKeyJwk'>): Promise<SigningKey> {
  let key = loaded.get(connection);
  if (!key) {
    key = loadSigningKey(connection, config);
    loaded.set(connection, key);
    key.catch(() => loaded.delete(connection));
  }
  return key;
}

/** Keys for the authorization server's cookies (interaction and session), kept like the signing key. */
export function loadCookieKeys(connection: Connection): Promise<string[]> {
  return createServerSecretsRepository(connection).ensureServerSecret('auth-server-cookie-keys', async () => [
    randomBytes(32).toString('base64url'),
  ]);
}
