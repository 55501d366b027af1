import type { IncomingMessage } from 'node:http';
import type { Express } from 'express';

/** The caller's address of any request this app serves, Express's or not. */
export type CallerAddress = (req: IncomingMessage) => string;

/**
 * The caller's address as Express's `req.ip` chooses it (the socket address, or the
 * `X-Forwarded-For` hop `TRUST_PROXY` names), also for requests Express never wraps (the token
 * lane, api/token-lane.ts). It runs Express's own `ip` getter on the request's headers and socket
 * with this app's settings, so the allow-lists and every per-address limit see one address.
 */
export function callerAddressOf(app: Express): CallerAddress {
  return (req) => {
    const ip: unknown = Reflect.get(app.request, 'ip', { app, headers: req.headers, socket: req.socket });
    return typeof ip === 'string' && ip !== '' ? ip : (req.socket.remoteAddress ?? 'unknown');
  };
}
