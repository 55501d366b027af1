import type { JWK } from 'jose';

export type SigningAlg = 'ES256' | 'RS256';

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  /** Private JWK: give only to the authorization server (and other token signers). */
  privateJwk: JWK;
  /** Public half, as published at the JWKS endpoint. */
  publicJwk: JWK;
}

/** What a process signs and verifies with at one moment. */
export interface SigningKeys {
  /** Signs access tokens and OTP validation JWTs (ACCESS_TOKEN_SIGNING_ALG). */
  tokens: SigningKey;
  /** Since when (ms since the epoch) `tokens` signs: its activeFrom, or its creation for a first key; undefined for SIGNING_KEY_JWK. */
  tokensSince?: number;
  /** Signs ID tokens. */
  idTokens: SigningKey;
  /**
   * Every key not yet removed, the two above first: published at the JWKS endpoint and accepted
   * when our own tokens come back. It holds keys that signed before (after a rotation or a change
   * of ACCESS_TOKEN_SIGNING_ALG, until the tokens they signed have expired) and keys a rotation
   * made that do not sign yet (published first, so verifiers that cache the JWKS know them).
   */
  all: SigningKey[];
  /** The key ids in the order above, which signs what included: it changes when the key set does. */
  version: string;
  /** Until when (ms since the epoch) this holds: the next moment a loaded key starts signing or is removed. */
  validUntil: number;
}

/** One key of a chain, with the moments a rotation gave it. */
export interface ChainedKey {
  key: SigningKey;
  /** When it starts signing (ms since the epoch); -Infinity for the chain's first key. */
  activeFrom: number;
  /** When every earlier key of the chain is removed (ms since the epoch); undefined for the first key. */
  retiresEarlierAt?: number;
  /** When it was stored (ms since the epoch); undefined for SIGNING_KEY_JWK. */
  storedAt?: number;
}

/** Since when the newest key of the chain signs, or will (its age decides a scheduled rotation); undefined when unknown. */
export function newestKeySigningSince(chain: KeyChain): { key: SigningKey; since: number | undefined } {
  const newest = chain.keys.at(-1) as ChainedKey;
  return { key: newest.key, since: signingSince(newest) };
}

/**
 * The keys of one algorithm, oldest first: the key generated at the first start (or SIGNING_KEY_JWK)
 * and the successors each rotation added. `configured` is SIGNING_KEY_JWK, which the service cannot
 * rotate.
 */
export interface KeyChain {
  alg: SigningAlg;
  configured: boolean;
  keys: ChainedKey[];
}

/** When the key at `index` is removed: the earliest retirement any later key of its chain set. */
export function removedAt(chain: KeyChain, index: number): number {
  let at = Number.POSITIVE_INFINITY;
  for (const later of chain.keys.slice(index + 1)) at = Math.min(at, later.retiresEarlierAt ?? Number.POSITIVE_INFINITY);
  return at;
}

/** The newest key of the chain that signs at `t`: started, not removed. */
function signingKeyOf(chain: KeyChain, t: number): ChainedKey | undefined {
  for (let index = chain.keys.length - 1; index >= 0; index -= 1) {
    const chained = chain.keys[index] as ChainedKey;
    if (chained.activeFrom <= t && removedAt(chain, index) > t) return chained;
  }
  return undefined;
}

/** Since when a key signs: its activeFrom, or when it was stored for a first key; undefined when unknown (SIGNING_KEY_JWK). */
const signingSince = (chained: ChainedKey): number | undefined =>
  chained.storedAt === undefined ? undefined : Math.max(chained.activeFrom, chained.storedAt);

/**
 * The keys at moment `t`: the chain of `accessAlg` signs access tokens, the RS256 chain ID tokens
 * (OpenID Connect requires RS256 for them), and every key not removed is published. The states of
 * a rotated key follow from its moments, with no further write: published (before `activeFrom`),
 * signing, published while the tokens it signed may live (until its successor's
 * `retiresEarlierAt`), removed.
 */
export function signingKeysAt(chains: KeyChain[], accessAlg: SigningAlg, t: number): SigningKeys {
  const signer = (alg: SigningAlg) => {
    const chain = chains.find((candidate) => candidate.alg === alg);
    const key = chain && signingKeyOf(chain, t);
    if (!key) throw new Error(`no ${alg} signing key is in use`);
    return key;
  };
  const tokenSigner = signer(accessAlg);
  const tokens = tokenSigner.key;
  const idTokens = accessAlg === 'RS256' ? tokens : signer('RS256').key;
  const all = [tokens, ...(idTokens === tokens ? [] : [idTokens])];
  let validUntil = Number.POSITIVE_INFINITY;
  for (const chain of chains) {
    chain.keys.forEach((chained, index) => {
      const removal = removedAt(chain, index);
      for (const moment of [chained.activeFrom, removal]) if (moment > t) validUntil = Math.min(validUntil, moment);
      if (removal > t && !all.includes(chained.key)) all.push(chained.key);
    });
  }
  const version = `${tokens.kid} ${idTokens.kid} ${all.map((key) => key.kid).join(' ')}`;
  return { tokens, tokensSince: signingSince(tokenSigner), idTokens, all, version, validUntil };
}
