import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Bits of an IPv6 address that one caller is taken to hold: a /64 is the smallest block a site gets. */
export const IPV6_CALLER_PREFIX_BITS = 64;

/**
 * The caller behind an address, for budgets kept per caller address: an IPv4 address itself (an
 * IPv4-mapped IPv6 address as the IPv4 address it maps), an IPv6 address as its /64. A single
 * host is routinely given a whole /64 and may send from any of its 2^64 addresses, so a budget
 * per IPv6 address would be a budget per request. Anything that is not an IP address is
 * returned as it is.
 */
export function callerBlock(address: string): string {
  if (isIP(address) !== 6) return address;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${IPV6_CALLER_PREFIX_BITS}`);
  return `${network.toString()}/${IPV6_CALLER_PREFIX_BITS}`;
}
