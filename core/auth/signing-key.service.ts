import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Connection } from 'mongoose';
import type { Config } from '../platform/config/config.js';
import { signingKeysAt, type ChainedKey, type KeyChain, type SigningAlg, type SigningKey, type SigningKeys } from './signing-key-chains.js';
import { isSealedSigningJwk, openSigningJwk, sealSigningJwk, type SealedSigningJwk } from './sealed-signing-jwk.js';
import { createSigningKeyRing, type SigningKeyRing, type SigningKeyRingOptions } from './signing-key-ring.js';
import { createServerSecretsRepository } from './server-secrets.repository.js';
import type { StoredRotationEntry } from './signing-key-rotation-entry.js';

export type { SigningAlg, SigningKey, SigningKeys } from './signing-key-chains.js';

/** ID tokens are RS256: OpenID Connect requires every provider to offer it for them. */
export const ID_TOKEN_SIGNING_ALG = 'RS256';

export type KeySettings = Pick<Config, 'signingKeyJwk' | 'accessTokenSigningAlg'>;

const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use'] as const;
/** Where each key is kept; the RSA key keeps the name it had when it was the only key. */
const STORED_AS: Record<SigningAlg, string> = { RS256: 'access-token-signing-jwk', ES256: 'access-token-signing-jwk-es256' };

export function publicPart(jwk: JWK): JWK {
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

export async function generateSigningJwk(alg: SigningAlg): Promise<JWK> {
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

/**
 * Where rotation number `sequence` (1, 2, …) keeps the keys it made: one document per rotation,
 * so a rotation is stored whole or not at all, and the number is the lock (of two rotations
 * counting from the same last one, the unique name lets exactly one be stored) and the order.
 */
export const rotationName = (sequence: number) => `${ROTATION_PREFIX}${sequence}`;
const ROTATION_PREFIX = 'signing-key-rotation:';
/** What a rotated key's seal is bound to: its rotation and its algorithm. */
export const rotatedKeyName = (rotation: string, alg: SigningAlg) => `${rotation}:${alg}`;

/** A rotation as stored: every key it made, sealed like the first keys, with the moments that make their states. */
export interface StoredRotation {
  /** When its keys start signing. */
  activeFrom: Date;
  rotatedAt: Date;
  keys: {
    alg: SigningAlg;
    sealed: SealedSigningJwk;
    /** When every earlier key of its chain is removed (the rotation's retirement of its predecessors). */
    retiresEarlierAt: Date;
  }[];
  /**
   * Its `signing-keys.rotated` entry, kept here until the activity record has it. Absent on
   * rotations stored before the entry was kept: the process that stored them wrote it next.
   */
  entry?: StoredRotationEntry;
  /** The Idempotency-Key claim of the admin request that made it: a retry resuming that claim answers this rotation. */
  claimId?: string;
}

/** A stored rotation document: its name, its number, and what it holds. */
export interface StoredRotationDocument {
  name: string;
  sequence: number;
  rotation: StoredRotation;
}

/** The stored keys: one chain per algorithm, the number of the last rotation (0 before any), and the rotation documents in order. */
export interface StoredKeys {
  chains: KeyChain[];
  lastRotation: number;
  rotations: StoredRotationDocument[];
}

const configuredKey = async (settings: KeySettings) =>
  settings.signingKeyJwk ? toSigningKey(await completeJwk(JSON.parse(settings.signingKeyJwk) as JWK, 'RS256')) : undefined;

/**
 * The first key of each chain the settings need: the RSA key (unless SIGNING_KEY_JWK) and, for
 * ES256 access tokens, the P-256 key, each generated once and kept (sealed) in MongoDB.
 */
async function ensureFirstKeys(connection: Connection, settings: KeySettings, encryptionKey: Buffer): Promise<void> {
  const algs: SigningAlg[] = [
    ...(settings.signingKeyJwk ? [] : ['RS256' as const]),
    ...(settings.accessTokenSigningAlg === 'ES256' ? ['ES256' as const] : []),
  ];
  const secrets = createServerSecretsRepository(connection);
  for (const alg of algs) {
    const name = STORED_AS[alg];
    const stored = await secrets.ensureServerSecret<unknown>(name, async () => {
      const jwk = await generateSigningJwk(alg);
      return sealSigningJwk(name, jwk, publicPart(jwk), encryptionKey);
    });
    await openStoredKey(connection, name, stored, encryptionKey);
  }
}

/**
 * Every key chain kept now, read in one query: the first keys (and SIGNING_KEY_JWK) followed, in
 * the order of the rotations, by the key of that algorithm each rotation made. Creates nothing; a
 * chain whose first key does not exist (the P-256 key before any process used ES256) is absent.
 */
export async function readStoredKeys(connection: Connection, settings: KeySettings, encryptionKey: Buffer): Promise<StoredKeys> {
  const stored = await createServerSecretsRepository(connection).findServerSecretsNamedOrPrefixed<unknown>(
    [STORED_AS.RS256, STORED_AS.ES256],
    ROTATION_PREFIX,
  );
  const rotations = [...stored]
    .filter(([name]) => name.startsWith(ROTATION_PREFIX))
    .map(([name, { value, createdAt }]) => ({
      name,
      sequence: Number(name.slice(ROTATION_PREFIX.length)),
      rotation: value as StoredRotation,
      createdAt,
    }))
    .filter(({ sequence }) => Number.isSafeInteger(sequence) && sequence > 0)
    .sort((a, b) => a.sequence - b.sequence);
  const configured = await configuredKey(settings);
  const chains: KeyChain[] = [];
  for (const alg of ['RS256', 'ES256'] as const) {
    const storedFirst = alg === 'RS256' && configured ? undefined : stored.get(STORED_AS[alg]);
    const first = alg === 'RS256' && configured ? configured : await storedFirstKey(connection, storedFirst?.value, alg, encryptionKey);
    if (!first) continue;
    const keys: ChainedKey[] = [{ key: first, activeFrom: Number.NEGATIVE_INFINITY, storedAt: storedFirst?.createdAt.getTime() }];
    // SIGNING_KEY_JWK replaces every RSA key the service made, as it replaces the first one: the
    // operator's key signs, and the RSA keys of rotations from before it was set are not
    // published (their documents are kept, should the setting be removed again).
    for (const { name, rotation, createdAt } of alg === 'RS256' && configured ? [] : rotations) {
      const made = rotation.keys.find((key) => key.alg === alg);
      if (!made) continue;
      keys.push({
        key: toSigningKey(openSigningJwk(rotatedKeyName(name, alg), made.sealed, encryptionKey)),
        activeFrom: new Date(rotation.activeFrom).getTime(),
        retiresEarlierAt: new Date(made.retiresEarlierAt).getTime(),
        storedAt: createdAt.getTime(),
      });
    }
    chains.push({ alg, configured: alg === 'RS256' && configured !== undefined, keys });
  }
  return {
    chains,
    lastRotation: rotations.at(-1)?.sequence ?? 0,
    rotations: rotations.map(({ name, sequence, rotation }) => ({ name, sequence, rotation })),
  };
}

/** The key chains now (readStoredKeys without the rotation count): what a process verifies and signs with. */
export async function readKeyChains(connection: Connection, settings: KeySettings, encryptionKey: Buffer): Promise<KeyChain[]> {
  return (await readStoredKeys(connection, settings, encryptionKey)).chains;
}

async function storedFirstKey(
  connection: Connection,
  stored: unknown,
  alg: SigningAlg,
  encryptionKey: Buffer,
): Promise<SigningKey | undefined> {
  if (stored === undefined) return undefined;
  return toSigningKey(await openStoredKey(connection, STORED_AS[alg], stored, encryptionKey));
}

/**
 * Reads the stored keys: the first time it also creates the first keys the settings need, later
 * reads are one query each (what a process reloads with).
 */
export function storedKeysReader(connection: Connection, settings: KeySettings, encryptionKey: Buffer): () => Promise<StoredKeys> {
  let ensured = false;
  return async () => {
    if (!ensured) {
      await ensureFirstKeys(connection, settings, encryptionKey);
      ensured = true;
    }
    return readStoredKeys(connection, settings, encryptionKey);
  };
}

/** The key chains, read as storedKeysReader reads them; `afterRead` gets each read whole (the rotations' upkeep) before its chains are used. */
export function keyChainsReader(
  connection: Connection,
  settings: KeySettings,
  encryptionKey: Buffer,
  afterRead?: (stored: StoredKeys) => Promise<void>,
): () => Promise<KeyChain[]> {
  const read = storedKeysReader(connection, settings, encryptionKey);
  return async () => {
    const stored = await read();
    await afterRead?.(stored);
    return stored.chains;
  };
}

/**
 * The signing keys at `now`: the RSA key chain (ID tokens, and access tokens when
 * ACCESS_TOKEN_SIGNING_ALG is RS256) and, when access tokens are ES256, the P-256 chain. ES256 is
 * the default because its signature costs about a tenth of an RSA-2048 one and every common JWT
 * library verifies it. Keys of the other algorithm stay published (a change of
 * ACCESS_TOKEN_SIGNING_ALG: the tokens they signed keep verifying). `encryptionKey`
 * (OTP_ENCRYPTION_KEY) seals the private keys kept in MongoDB.
 */
export async function loadSigningKeys(
  connection: Connection,
  settings: KeySettings,
  encryptionKey: Buffer,
  now: number = Date.now(),
): Promise<SigningKeys> {
  return signingKeysAt(await keyChainsReader(connection, settings, encryptionKey)(), settings.accessTokenSigningAlg, now);
}

/** The process's signing keys now, the same for every caller (core/auth/signing-key-ring.ts keeps them current). */
export type SigningKeysCache = () => Promise<SigningKeys>;

/**
 * The process's signing key ring (core/auth/signing-key-ring.ts) on the stored key chains: built
 * once by the composition root and handed to the token signers and checks, so they all sign and
 * verify alike, and follow rotations without a restart. Each of its reads is also when the
 * process catches up on the rotations (`afterRead`).
 */
export function createStoredSigningKeyRing(
  connection: Connection,
  settings: KeySettings & Pick<Config, 'signingKeyReloadSeconds'>,
  encryptionKey: Buffer,
  on: Pick<SigningKeyRingOptions, 'onReadError' | 'onKeys'> & {
    /** After each read: what the process does with the rotations it read (core/auth/signing-key-rotation-upkeep.ts). */
    afterRead?: (stored: StoredKeys) => Promise<void>;
  },
): SigningKeyRing {
  const { afterRead, ...ringOptions } = on;
  return createSigningKeyRing(keyChainsReader(connection, settings, encryptionKey, afterRead), {
    reloadIntervalMs: settings.signingKeyReloadSeconds * 1000,
    keysAt: (chains, t) => signingKeysAt(chains, settings.accessTokenSigningAlg, t),
    ...ringOptions,
  });
}

/** Keys for the authorization server's cookies (interaction and session), kept like the signing key. */
export function loadCookieKeys(connection: Connection): Promise<string[]> {
  return createServerSecretsRepository(connection).ensureServerSecret('auth-server-cookie-keys', async () => [
    randomBytes(32).toString('base64url'),
  ]);
}
