import type { RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import type { ClientLookup } from '../../core/clients/client-lookup.cache.js';
import { HttpError } from '../errors/http-error.js';
import { authOf } from './bearer-auth.middleware.js';

type ParsedRange = [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined;

// Parsed ranges by their text (undefined when unparseable): parsing an IPv6 range on every
// request was a few per cent of an OTP request's CPU. Bounded, as the texts come from client
// records: emptied when full, and rebuilt from the ranges in use.
const parsedRanges = new Map<string, ParsedRange>();
const MAX_PARSED_RANGES = 10_000;

function parsedRange(cidr: string): ParsedRange {
  if (parsedRanges.has(cidr)) return parsedRanges.get(cidr);
  let parsed: ParsedRange;
  try {
    parsed = ipaddr.parseCIDR(cidr);
  } catch {
    parsed = undefined;
  }
  if (parsedRanges.size >= MAX_PARSED_RANGES) parsedRanges.clear();
  parsedRanges.set(cidr, parsed);
  return parsed;
}

/**
 * True when `address` lies in one of `cidrs`. IPv4-mapped IPv6 callers (`::ffff:10.1.2.3`, what a
 * dual-stack socket reports for IPv4) match IPv4 ranges, and IPv4 callers match `::ffff:0:0/96`
 * style ranges. Unparseable input never matches.
 */
export function isAddressAllowed(address: string, cidrs: readonly string[]): boolean {
  let caller: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    caller = ipaddr.process(address);
  } catch {
    return false;
  }
  return cidrs.some((cidr) => {
    const parsed = parsedRange(cidr);
    if (parsed === undefined) return false;
    try {
      const [range, bits] = parsed;
      if (caller.kind() === range.kind()) return caller.match(range, bits);
      if (caller.kind() === 'ipv4' && range.kind() === 'ipv6') return (caller as ipaddr.IPv4).toIPv4MappedAddress().match(range, bits);
      if (caller.kind() === 'ipv6' && range.kind() === 'ipv4') return false;
      return false;
    } catch {
      return false;
    }
  });
}

/** `::ffff:10.1.2.3` as `10.1.2.3`: the form an operator writes in allowedIps. */
function displayAddress(address: string): string {
  try {
    return ipaddr.process(address).toString();
  } catch {
    return address || 'unknown';
  }
}

/**
 * The calling client's allow-list, on every enterprise route (users, OTPs, notifications). Runs
 * after requireBearer. The caller's address is `req.ip`: the socket address, or the
 * X-Forwarded-For hop chosen by Express's `trust proxy` (TRUST_PROXY: a hop count or the
 * proxies' CIDRs, never "trust everything"). An empty list allows nobody. The refusal keeps the
 and says in `detail` which address the server saw.
 */
export function requireAllowedIp(clients: Pick<ClientLookup, 'client'>): RequestHandler {
  return async (req, res, next) => {
    const { clientId } = authOf(res);
    const client = await clients.client(clientId);
    const address = req.ip ?? req.socket.remoteAddress ?? '';
    if (!client || !isAddressAllowed(address, client.allowedIps)) {
      throw new HttpError('IP_NOT_WHITELISTED', 401, 'IP not whitelisted', {
        extra: { detail: `The server saw the address ${displayAddress(address)}; the client's allowedIps must include it.` },
      });
    }
    next();
  };
}
