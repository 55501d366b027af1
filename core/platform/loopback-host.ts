import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/*
 * Which host names are this machine. Host names are taken as `URL.hostname` writes them: lower
 * case, IPv6 in brackets, IPv4 already turned into four decimal parts (`127.1` is `127.0.0.1`),
 * IPv4-mapped IPv6 in hex (`[::ffff:7f00:1]`).
 */

/** The names a client writes for this machine: RFC 8252 (7.3, 8.3) lets native apps listen there. */
const CANONICAL_LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Whether the host is this machine in any spelling: an address of 127.0.0.0/8, ::1, an IPv4
 * loopback address mapped into IPv6 (::ffff:127.0.0.1), or `localhost` and every name under it
 * (RFC 6761 keeps them on loopback). For judging where a process itself is reached.
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  const literal = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) === 0) return false;
  const address = ipaddr.parse(literal);
  const judged = address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
  return judged.range() === 'loopback';
}

/**
 * Whether the host is one of the three canonical loopback names: 127.0.0.1, [::1], localhost.
 * Client registrations hold to these: a native app's redirect URI matches on any port only there,
 * and an origin or redirect URI may be plain http only there; other spellings of this machine
 * (127.0.0.2, app.localhost, [::ffff:7f00:1]) are judged like any other host.
 */
export function isCanonicalLoopbackHost(hostname: string): boolean {
  return CANONICAL_LOOPBACK_HOSTS.has(hostname);
}
