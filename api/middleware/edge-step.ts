import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request as Node hands it over, with what the edge steps write on it (Express's own names). */
export interface EdgeRequest extends IncomingMessage {
  /** The URL as it arrived: routers under a mount path shorten `url`. */
  originalUrl?: string;
  /** The request id the access log gives it (api/middleware/request-logging.ts). */
  id?: string;
}

/**
 * A step every answer goes through before its route (security headers, the access log, the
 * request metric), written for Node's own request and response so that both Express and the
 * token lane (api/token-lane.ts) can run it.
 */
export type EdgeStep = (req: EdgeRequest, res: ServerResponse, next: (err?: unknown) => void) => void;
