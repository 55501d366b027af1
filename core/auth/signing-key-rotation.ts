import type { Connection } from 'mongoose';
import type { ActivityActor } from '../activity/activity.repository.js';
import type { Config } from '../platform/config/config.js';
import type { Logger } from '../platform/logger/logger.js';
import { ConflictError } from '../platform/errors/app-error.js';
import { OTP_JWT_TTL_SECONDS } from './signed-token-lifetimes.js';
import type { KeyChain, SigningAlg } from './signing-key-chains.js';
import {
  generateSigningJwk,
  publicPart,
  rotatedKeyName,
  rotationName,
  storedKeysReader,
  type KeySettings,
  type StoredRotation,
} from './signing-key.service.js';
import { sealSigningJwk } from './sealed-signing-jwk.js';
import { recordRotationEntry, type RotationEntryStores, type StoredRotationEntry } from './signing-key-rotation-entry.js';
import type { ServerSecretsRepository } from './server-secrets.repository.js';

export type RotationSettings = KeySettings &
  Pick<Config, 'signingKeyReloadSeconds' | 'accessTokenTtlSeconds'> & { signIn: Pick<Config['signIn'], 'sessionTtlSeconds'> };

/** One key a rotation replaced. */
export interface RotatedSigningKey {
  alg: SigningAlg;
  /** The new key: published at once, signing from `activeFrom`. */
  kid: string;
  /** The key it replaces: it signs until `activeFrom` and is published (and accepted) until `previousKeyRemovedAt`. */
  previousKid: string;
  activeFrom: Date;
  previousKeyRemovedAt: Date;
}

export interface SigningKeyRotation {
  rotated: RotatedSigningKey[];
  /** SIGNING_KEY_JWK signs ID tokens and only its owner can replace it. */
  idTokenKeyConfigured: boolean;
}

export interface RotationStores extends RotationEntryStores {
  connection: Connection;
  /** Where each new key is inserted, under a name only one rotation can take, and its entry noted as written. */
  secrets: Pick<ServerSecretsRepository, 'insertServerSecret' | 'setServerSecretMember'>;
  settings: RotationSettings;
  /** OTP_ENCRYPTION_KEY: seals the new private keys, like the first ones. */
  encryptionKey: Buffer;
  /** Told when the rotation is stored but its entry is left to the processes reading the keys. */
  logger: Pick<Logger, 'warn'>;
}

/**
 * The moments of a rotation of the `alg` key made at `now` (ms). Normally the new key is
 * published first and signs only after two reload intervals (SIGNING_KEY_RELOAD_SECONDS): by then
 * every API process has read it, so each one publishes and accepts it before any token it signs
 * arrives. The replaced key stops signing then, everywhere at the same moment, and stays published
 * for one more reload interval plus as long as a token it signed may come back: an access token
 * or OTP validation JWT until it expires, and, for the RSA key, an ID token for as long as the
 * sign-in session it started (SIGN_IN_SESSION_TTL_SECONDS): apps sign users out with it as
 * `id_token_hint`, which the authorization server accepts expired but not signed by a key it no
 * longer has. Refresh tokens and user access tokens are opaque and signed by no key.
 * `retireAtOnce` (a key that may have leaked) ends the replaced key now: the tokens it signed are
 * refused.
 */
export function rotationMoments(
  settings: RotationSettings,
  alg: SigningAlg,
  now: number,
  retireAtOnce: boolean,
): { activeFrom: number; retiresEarlierAt: number } {
  if (retireAtOnce) return { activeFrom: now, retiresEarlierAt: now };
  const reload = settings.signingKeyReloadSeconds * 1000;
  const activeFrom = now + 2 * reload;
  const idTokenHints = alg === 'RS256' ? settings.signIn.sessionTtlSeconds : 0;
  const comesBackFor = Math.max(settings.accessTokenTtlSeconds, OTP_JWT_TTL_SECONDS, idTokenHints) * 1000;
  return { activeFrom, retiresEarlierAt: activeFrom + reload + comesBackFor };
}

/**
 * Replaces the key that signs access tokens and every other stored key (the RSA key that signs ID
 * tokens unless it is SIGNING_KEY_JWK, one key when access tokens are RS256; the key of the other
 * algorithm left by a change of ACCESS_TOKEN_SIGNING_ALG). Every new key goes into one document
 * numbered after the last rotation, so a rotation is stored whole or not at all: of two rotations
 * at the same moment exactly one is stored, and the other is a ConflictError that changed
 * nothing. The states of the keys then follow from the stored moments, with no further write.
 * Recorded as `signing-keys.rotated`: the document holds the entry until the activity record has
 * it, so a process that dies after the rotation's write leaves it to the processes reading the keys.
 * For the same reason a failing entry write does not fail the rotation: once the document is
 * stored the keys are rotated, and the entry is owed (written at the next read of the keys).
 */
export async function rotateSigningKeys(
  stores: RotationStores,
  options: {
    retireAtOnce?: boolean;
    comments?: string;
    now?: Date;
    /** Who asks (the activity record's actor): the admin unless said. */
    actor?: ActivityActor;
    /**
     * Rotate only while the newest access-token key is still this one (a ConflictError
     * otherwise): a scheduled rotation found it due, and another process may have rotated since.
     */
    ifNewestIs?: string;
    /**
     * The Idempotency-Key claim of the admin request, stored with the rotation: a retry resuming
     * it (its first request died after storing the keys) is answered that rotation, not a new one.
     */
    claim?: { id: string; resumed: boolean };
  } = {},
): Promise<SigningKeyRotation> {
  const { settings, encryptionKey } = stores;
  const { chains, lastRotation, rotations } = await storedKeysReader(stores.connection, settings, encryptionKey)();
  const chainOf = (alg: SigningAlg) => chains.find((chain) => chain.alg === alg) as KeyChain;
  const { claim } = options;
  const done = claim?.resumed ? rotations.find(({ rotation }) => rotation.claimId === claim.id)?.rotation : undefined;
  if (done) return rotationAsAnswered(done, chainOf('RS256').configured);
  const access = chainOf(settings.accessTokenSigningAlg);
  if (access.configured)
    throw new ConflictError('The signing key is SIGNING_KEY_JWK: the service cannot rotate it; set a new SIGNING_KEY_JWK instead');
  if (options.ifNewestIs !== undefined && access.keys.at(-1)?.key.kid !== options.ifNewestIs)
    throw new ConflictError('Signing keys were rotated by another request at the same time; rotate again');
  const idTokens = chainOf('RS256');
  // Every other stored chain too: the RSA key of ID tokens and, after a change of
  // ACCESS_TOKEN_SIGNING_ALG, the key of the other algorithm, which signs nothing but is still
  // published and accepted until replaced. Left out, a key retired "at once" would go on verifying.
  const toRotate = [access, ...chains.filter((chain) => chain !== access && !chain.configured)];
  const now = options.now ?? new Date();
  const name = rotationName(lastRotation + 1);
  const momentsOf = (alg: SigningAlg) => rotationMoments(settings, alg, now.getTime(), options.retireAtOnce === true);
  // Every key of a rotation starts signing at the same moment; the keys it replaces go at their own.
  const activeFrom = new Date(momentsOf(access.alg).activeFrom);
  const rotated: RotatedSigningKey[] = [];
  const stored: StoredRotation = { activeFrom, rotatedAt: now, keys: [], ...(claim ? { claimId: claim.id } : {}) };
  for (const chain of toRotate) {
    const { retiresEarlierAt } = momentsOf(chain.alg);
    const jwk = await generateSigningJwk(chain.alg);
    stored.keys.push({
      alg: chain.alg,
      sealed: sealSigningJwk(rotatedKeyName(name, chain.alg), jwk, publicPart(jwk), encryptionKey),
      retiresEarlierAt: new Date(retiresEarlierAt),
    });
    rotated.push({
      alg: chain.alg,
      kid: jwk.kid as string,
      previousKid: (chain.keys.at(-1) as KeyChain['keys'][number]).key.kid,
      activeFrom,
      previousKeyRemovedAt: new Date(retiresEarlierAt),
    });
  }
  const entry: StoredRotationEntry = {
    recorded: false,
    actor: options.actor ?? { type: 'admin' },
    signingKeys: rotated.map(({ alg, kid, previousKid }) => ({ alg, kid, previousKid })),
    // No member at all for comments not given (the entry would carry it).
    ...(options.comments !== undefined ? { comments: options.comments } : {}),
  };
  stored.entry = entry;
  if (!(await stores.secrets.insertServerSecret(name, stored, now)))
    throw new ConflictError('Signing keys were rotated by another request at the same time; rotate again');
  await recordRotationEntry(stores, name, now, entry).catch((err: unknown) =>
    stores.logger.warn(
      { err: (err as Error).message, rotation: name },
      'signing keys rotated; activity entry not written, the processes reading the keys write it',
    ),
  );
  return { rotated, idTokenKeyConfigured: idTokens.configured };
}

/** A stored rotation as its request answered it (its entry names each key it made and the one it replaced). */
function rotationAsAnswered(rotation: StoredRotation, idTokenKeyConfigured: boolean): SigningKeyRotation {
  const activeFrom = new Date(rotation.activeFrom);
  const rotated = (rotation.entry?.signingKeys ?? []).map(({ alg, kid, previousKid }) => ({
    alg: alg as SigningAlg,
    kid,
    previousKid,
    activeFrom,
    previousKeyRemovedAt: new Date(rotation.keys.find((key) => key.alg === alg)?.retiresEarlierAt ?? activeFrom),
  }));
  return { rotated, idTokenKeyConfigured };
}
