import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Connection } from 'mongoose';
import type { Config } from '../platform/config/config.js';
import { loadOnFirstUse } from '../platform/load-on-first-use.js';
import { isSealedSigningJwk, openSigningJwk, sealSigningJwk } from './sealed-signing-jwk.js';
import { createServerSecretsRepository } from './server-secrets.repository.js';

export type SigningAlg = 'ES256' | 'RS256';

/** ID tokens are RS256: OpenID Connect requires every provider to offer it for them. */
export const ID_TOKEN_SIGNING_ALG = 'RS256';

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  /** Private JWK: give only to the authorization server (and other token signers). */
  privateJwk: JWK;
  /** Public half, as published at the JWKS endpoint. */
  publicJwk: JWK;
}

export interface SigningKeys {
  /** Signs access tokens and OTP validation JWTs (ACCESS_TOKEN_SIGNING_ALG). */
  tokens: SigningKey;
  /** Signs ID tokens. */
  idTokens: SigningKey;
  /**
   * Every key held: published at the JWKS endpoint and accepted when our own tokens come back,
   * so tokens signed before ACCESS_TOKEN_SIGNING_ALG changed keep working until they expire.
   */
  all: SigningKey[];
}

type KeySettings = Pick<Config, 'signingKeyJwk' | 'accessTokenSigningAlg'>;

const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use'] as const;
/** Where each key is kept; the RSA key keeps the name it had when it was the only key. */
const STORED_AS: Record<SigningAlg, string> = { RS256: 'access-token-signing-jwk', ES256: 'access-token-signing-jwk-es256' };

function publicPart(jwk: JWK): JWK {
  const out: JWK = {};
  for (const member of PUBLIC_MEMBERS) if (jwk[member] !== undefined) out[member] = jwk[member];
  return out;
}

async function completeJwk(jwk: JWK, alg: SigningAlg): Promise<JWK> {
  if (alg === 'RS256' && (jwk.kty !== 'RSA' || typeof jwk.d !== 'string')) throw new Error('SIGNING_KEY_JWK must be a private RSA JWK');
  // Without a kid the thumbprint (RFC 7638) is a stable one: restarts keep the same kid.
  const kid = jwk.kid ?? (await calculateJwkThumbprint(jwk));
  return { ...jwk, kid, alg, use: 'sig' };
}

async function generateSigningJwk(alg: SigningAlg): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  return completeJwk(await exportJWK(privateKey), alg);
}

function toSigningKey(jwk: JWK): SigningKey {
  return { kid: jwk.kid as string, alg: jwk.alg as SigningAlg, privateJwk: jwk, publicJwk: publicPart(jwk) };
}

/**
 * The private JWK of a stored key. Earlier versions stored it in clear: such a key is sealed in
 * place (only while it is still in clear, so processes upgrading at once agree) and kept, so the
 * tokens it signed stay valid.
 */
async function openStoredKey(connection: Connection, name: string, stored: unknown, encryptionKey: Buffer): Promise<JWK> {
  if (isSealedSigningJwk(stored)) return openSigningJwk(name, stored, encryptionKey);
  const privateJwk = stored as JWK;
  if (typeof privateJwk.d !== 'string') throw new Error(`server secret ${name} is not a signing key`);
  const sealed = sealSigningJwk(name, privateJwk, publicPart(privateJwk), encryptionKey);
  await createServerSecretsRepository(connection).replaceServerSecretWhere(name, { d: { $exists: true } }, sealed);
  return privateJwk;
}

/** One algorithm's key: for RS256 SIGNING_KEY_JWK when set, else one generated once and kept (sealed) in MongoDB. */
async function loadKey(connection: Connection, settings: KeySettings, alg: SigningAlg, encryptionKey: Buffer): Promise<SigningKey> {
  if (alg === 'RS256' && settings.signingKeyJwk) return toSigningKey(await completeJwk(JSON.parse(settings.signingKeyJwk) as JWK, alg));
  const name = STORED_AS[alg];
  const stored = await createServerSecretsRepository(connection).ensureServerSecret<unknown>(name, async () => {
    const jwk = await generateSigningJwk(alg);
    return sealSigningJwk(name, jwk, publicPart(jwk), encryptionKey);
  });
  return toSigningKey(await openStoredKey(connection, name, stored, encryptionKey));
}

/**
 * The signing keys: the RSA key (ID tokens, and access tokens when ACCESS_TOKEN_SIGNING_ALG is
 * RS256) and, when access tokens are ES256, a P-256 key. ES256 is the default because its
 * signature costs about a tenth of an RSA-2048 one and every common JWT library verifies it.
 * `encryptionKey` (OTP_ENCRYPTION_KEY) seals the private keys kept in MongoDB.
 */
export async function loadSigningKeys(connection: Connection, settings: KeySettings, encryptionKey: Buffer): Promise<SigningKeys> {
  const rsa = await loadKey(connection, settings, 'RS256', encryptionKey);
  if (settings.accessTokenSigningAlg === 'RS256') {
    // Switched back from ES256: its key stays published so the tokens it signed keep verifying.
    const previous = await createServerSecretsRepository(connection).findServerSecret<unknown>(STORED_AS.ES256);
    if (previous === undefined) return { tokens: rsa, idTokens: rsa, all: [rsa] };
    return {
      tokens: rsa,
      idTokens: rsa,
      all: [rsa, toSigningKey(await openStoredKey(connection, STORED_AS.ES256, previous, encryptionKey))],
    };
  }
  const ec = await loadKey(connection, settings, 'ES256', encryptionKey);
  return { tokens: ec, idTokens: rsa, all: [ec, rsa] };
}

/**
 * The public halves of every signing key kept in MongoDB now (and of SIGNING_KEY_JWK), read
 * without creating or sealing anything: what another process may have added since this one
 * loaded its keys (a P-256 key made by a process started with ES256 while this one runs RS256).
 */
export async function loadStoredPublicJwks(connection: Connection, settings: KeySettings): Promise<JWK[]> {
  // One query for both: a reload is one store read.
  const stored = await createServerSecretsRepository(connection).findServerSecrets<unknown>([STORED_AS.ES256, STORED_AS.RS256]);
  const jwks = [...stored.values()].map((value) => (isSealedSigningJwk(value) ? value.publicJwk : publicPart(value as JWK)));
  if (settings.signingKeyJwk) jwks.push(publicPart(await completeJwk(JSON.parse(settings.signingKeyJwk) as JWK, 'RS256')));
  return jwks;
}

/** The process's signing keys: loaded on first use, then the same for every caller. */
export type SigningKeysCache = () => Promise<SigningKeys>;

/**
 * loadSigningKeys once per process (a failed load is tried again next time): the composition root
 * builds it and hands it to the token signers and checks, so they all sign and verify alike.
 */
export function createSigningKeysCache(connection: Connection, settings: KeySettings, encryptionKey: Buffer): SigningKeysCache {
  return loadOnFirstUse(() => loadSigningKeys(connection, settings, encryptionKey));
}

/** Keys for the authorization server's cookies (interaction and session), kept like the signing key. */
export function loadCookieKeys(connection: Connection): Promise<string[]> {
  return createServerSecretsRepository(connection).ensureServerSecret('auth-server-cookie-keys', async () => [
    randomBytes(32).toString('base64url'),
  ]);
}
