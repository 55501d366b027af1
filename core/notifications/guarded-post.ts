import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkAddress, checkCallbackUrl, type CallbackAddressPolicy } from './callback-address-policy.js';

/** The resolver the connection uses: node:dns `lookup` in production, replaceable in tests. */
export type Resolver = (hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

export const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, callback);

/** The callback's target is not allowed (an internal address): permanent, never retried. */
export class CallbackAddressRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`callback refused: callbackUrl ${reason}`);
    this.name = 'CallbackAddressRefusedError';
  }
}

export interface GuardedPostOptions {
  policy: CallbackAddressPolicy;
  timeoutMs: number;
  resolver?: Resolver;
}

/**
 * The lookup the socket connects with: it resolves the name once, refuses the whole name when any
 * of its addresses is not allowed, and hands the socket exactly the addresses it checked. So a
 * name that resolves to a public address when checked and to 127.0.0.1 a moment later (DNS
 * rebinding) cannot slip through: there is no second resolution.
 */
function checkedLookup(protocol: string, options: GuardedPostOptions): LookupFunction {
  const resolver = options.resolver ?? systemResolver;
  return (hostname, lookupOptions, callback) => {
    resolver(hostname, (err, resolved) => {
      if (err) return callback(err as NodeJS.ErrnoException, '', 0);
      const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family;
      const addresses = resolved.filter((a) => !family || a.family === family);
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      for (const a of addresses) {
        const check = checkAddress(a.address, protocol, options.policy);
        if (!check.ok) return callback(new CallbackAddressRefusedError(`${check.reason}; ${hostname} resolved to it`), '', 0);
      }
      if (lookupOptions.all) return callback(null, addresses);
      const [first] = addresses as [LookupAddress];
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * POSTs `body` to `url` when its address is allowed: the URL is checked first (scheme, IP
 * literals), the host name's addresses while connecting. Redirects are answers like any other
 * (never followed). Resolves with the status; a refused address rejects with
 * CallbackAddressRefusedError, a network error or the timeout with its own error.
 */
export function guardedPost(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  options: GuardedPostOptions,
): Promise<number> {
  const check = checkCallbackUrl(url, options.policy);
  if (!check.ok) return Promise.reject(new CallbackAddressRefusedError(check.reason));
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        // A fresh connection per callback: a pooled socket would skip the lookup that checks the address.
        agent: false,
        lookup: checkedLookup(target.protocol, options),
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(err));
    req.end(body);
  });
}
