import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/*
 * Where callbacks may go. A callback is a POST the service makes on a client's behalf, so without
 * this fence any client could make the service reach its own network (cloud metadata, admin
 * consoles, databases on loopback). Only public unicast addresses are allowed; loopback only
 * where the deployment allows it (development, or an operator's opt-in), private networks only
 * those the operator lists. The same rules apply to the URL when a notification is created and
 * to every address its host name resolves to when the callback is sent.
 */

export interface CallbackAddressPolicy {
  /** Loopback (127.0.0.0/8, ::1, `localhost`) allowed, over http as well as https. */
  readonly allowLoopback: boolean;
  /** CIDR ranges (private networks) the operator allows, https only. */
  readonly allowedNetworks: readonly string[];
}

export type AddressCheck = { ok: true } | { ok: false; reason: string };

// ipaddr.js range names, as a person reads them.
const RANGE_NAMES: Record<string, string> = {
  carrierGradeNat: 'shared',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  ipv4Mapped: 'IPv4-mapped',
};

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * An IPv6 address that carries an IPv4 one is judged as that IPv4 address: IPv4-mapped
 * (`::ffff:127.0.0.1`), and IPv4-compatible (`::127.0.0.1`, the deprecated ::/96 of RFC 4291
 * 2.5.5.1), which ipaddr.js ranks as plain unicast although a host with automatic IPv6-in-IPv4
 * tunnelling routes it towards that IPv4 address. `::` and `::1` keep their own ranges (unspecified, loopback).
 */
function normalize(address: Address): Address {
  if (address.kind() !== 'ipv6') return address;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  const [high = 0, low = 0] = v6.parts.slice(6);
  const ipv4Compatible = v6.parts.slice(0, 6).every((part) => part === 0) && v6.range() === 'unicast';
  return ipv4Compatible ? new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]) : address;
}

function inAllowedNetwork(address: Address, networks: readonly string[]): boolean {
  return networks.some((cidr) => {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    return address.kind() === range.kind() && address.match(range, bits);
  });
}

/** `localhost` and every name under it are loopback by definition (RFC 6761); no lookup needed. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Whether a connection to this IP address (any textual form ipaddr.js parses) over `protocol`
 * is allowed, and if not, why in words a client developer understands.
 */
export function checkAddress(ip: string, protocol: string, policy: CallbackAddressPolicy): AddressCheck {
  const address = normalize(ipaddr.parse(ip.replace(/^\[|\]$/g, '')));
  const range = address.range();
  const shown = address.toString();
  if (range === 'loopback') {
    return policy.allowLoopback ? { ok: true } : { ok: false, reason: `must reach a public address (${shown} is in the loopback range)` };
  }
  if (protocol !== 'https:') return { ok: false, reason: 'must be https (http only on loopback, where allowed)' };
  if (range === 'unicast' || inAllowedNetwork(address, policy.allowedNetworks)) return { ok: true };
  return { ok: false, reason: `must reach a public address (${shown} is in the ${RANGE_NAMES[range] ?? range} range)` };
}

/**
 * The checks that need no lookup: scheme, credentials, and the host when it is an IP literal or a
 * loopback name. The URL parser (WHATWG) has already turned `127.1`, `2130706433`, `0x7f.1`,
 * `0177.0.0.1` and percent-encoded hosts into the dotted address, and ipaddr.js unwraps
 * IPv4-mapped IPv6, so every spelling of an address is judged as that address.
 */
export function checkCallbackUrl(value: string, policy: CallbackAddressPolicy): AddressCheck {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'must be https (http only on loopback, where allowed)' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return checkAddress(host, url.protocol, policy);
  if (isLoopbackName(host)) {
    return policy.allowLoopback
      ? { ok: true }
      : { ok: false, reason: `must reach a public address (${host.toLowerCase().replace(/\.$/, '')} is in the loopback range)` };
  }
  // A host name: its addresses are checked each time a callback is sent (they may change).
  return url.protocol === 'https:' ? { ok: true } : { ok: false, reason: 'must be https (http only on loopback, where allowed)' };
}

/** Whether every entry is a CIDR range ipaddr.js reads (for the configuration check). */
export function isCidr(value: string): boolean {
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}
