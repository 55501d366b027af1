import type { ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { EdgeRequest, EdgeStep } from './middleware/edge-step.js';

export interface TokenLane {
  /** The token endpoint's full path; only a POST to exactly this URL (no query) takes the lane. */
  path: string;
  /** The app's first steps, in the app's order. */
  steps: readonly EdgeStep[];
  /** Hands the request to the authorization server; rejects when it cannot be served. */
  serve: (req: EdgeRequest, res: ServerResponse) => Promise<void>;
  /** Answers an error the way the app's error handler does. */
  fail: (err: unknown, req: EdgeRequest, res: ServerResponse) => void;
}

type Handle = (req: EdgeRequest, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/**
 * Token requests go straight to the authorization server after the app's first steps, without
 * Express's per-request work (its request and response prototypes, the router's walk past the
 * app's middleware and routers to the mounted provider): that work was 8 % of a
 * client-credentials grant's CPU, the busiest request the service answers. Everything the app
 * does to such a request happens here too, in the same order: the steps the app runs first, then
 * the provider, then the app's error body when the provider cannot be reached. The app's other
 * first middleware (the `/v1/me` CORS, the 405 answer) has nothing to do for this method and path.
 * Any other request, a token request with a query string included, is Express's.
 */
export function serveTokenRequestsFirst(app: Express, lane: TokenLane): void {
  const appHandle = (app as unknown as { handle: Handle }).handle;
  const handle: Handle = function tokenLaneFirst(this: unknown, req, res, callback) {
    if (req.method !== 'POST' || req.url !== lane.path) return appHandle.call(this, req, res, callback);
    req.originalUrl = req.url;
    const fail = (err: unknown) => lane.fail(err, req, res);
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined) return fail(err);
      const step = lane.steps[index++];
      if (step) return step(req, res, next);
      lane.serve(req, res).catch(fail);
    };
    try {
      next();
    } catch (err) {
      fail(err);
    }
  };
  (app as unknown as { handle: Handle }).handle = handle;
}
