// Checks of single settings that a JSON Schema cannot say; each returns its problems without the
// variable's name (the reader puts `KEY: ` in front).
import ipaddr from 'ipaddr.js';
import type { CountryCode } from 'libphonenumber-js/min';
import { phoneNumbers } from '../phone-numbers.js';

export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function isAddressOrCidr(value: string): boolean {
  try {
    if (value.includes('/')) ipaddr.parseCIDR(value);
    else ipaddr.parse(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * TRUST_PROXY says which X-Forwarded-For hop is the caller: a hop count, or the proxies'
 * addresses/CIDRs. `true` would believe any client-written header, letting a caller pick the
 * address that allow-lists and per-address limits see, so it is refused.
 */
export function trustProxyProblems(value: string): string[] {
  if (value.trim().toLowerCase() === 'true') {
    return [
      "'true' would trust any X-Forwarded-For a caller writes (bypassing IP allow-lists and per-address limits); give the number of proxy hops in front of the service (e.g. 1) or the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)",
    ];
  }
  if (value === 'false' || /^[0-9]{1,2}$/.test(value)) return [];
  const bad = value
    .split(',')
    .map((s) => s.trim())
    .filter((entry) => !isAddressOrCidr(entry));
  return bad.length > 0 || value.trim() === ''
    ? [`must be false, a hop count (0-99) or a comma-separated list of addresses/CIDRs; not valid: ${bad.join(', ') || value}`]
    : [];
}

/** SMS countries are ISO 3166-1 alpha-2 codes of countries with a numbering plan (`US`, `GB`, `JM`). */
export function countryListProblems(value: string): string[] {
  const bad = splitList(value).filter((entry) => !/^[A-Z]{2}$/.test(entry) || !phoneNumbers().isSupportedCountry(entry as CountryCode));
  if (splitList(value).length === 0)
    return ['must list at least one country (ISO 3166-1 alpha-2, e.g. US,CA,GB); leave it unset for every country'];
  return bad.length > 0
    ? [`must be a comma-separated list of ISO 3166-1 alpha-2 country codes in capitals (e.g. US,CA,GB); not valid: ${bad.join(', ')}`]
    : [];
}

/** Callback networks are CIDR ranges only (a bare address is a /32 the operator should say). */
export function cidrListProblems(value: string): string[] {
  const bad = splitList(value).filter((entry) => !entry.includes('/') || !isAddressOrCidr(entry));
  return bad.length > 0 ? [`must be a comma-separated list of CIDR ranges; not valid: ${bad.join(', ')}`] : [];
}

/** RS256 keys of fewer bits are weak, and jose refuses them when our tokens are verified (RFC 7518 3.3). */
const MIN_RSA_MODULUS_BITS = 2048;

/** A token-signing key given in env must be usable, or the process would fail on its first token. */
export function privateRsaJwkProblems(value: string): string[] {
  let jwk: Record<string, unknown> | undefined;
  try {
    jwk = JSON.parse(value) as Record<string, unknown>;
  } catch {
    // Not JSON: reported below.
  }
  if (!jwk || jwk.kty !== 'RSA' || !['n', 'e', 'd'].every((member) => typeof jwk[member] === 'string')) {
    return ['must be a private RSA JWK as JSON (kty RSA with n, e, d)'];
  }
  const modulus = Buffer.from(jwk.n as string, 'base64url');
  const leadingZeros = modulus.findIndex((byte) => byte !== 0);
  const bits = leadingZeros < 0 ? 0 : (modulus.length - leadingZeros) * 8 - Math.clz32(modulus[leadingZeros] as number) + 24;
  return bits >= MIN_RSA_MODULUS_BITS ? [] : [`must be an RSA key of ${MIN_RSA_MODULUS_BITS} bits or more (this one has ${bits})`];
}
