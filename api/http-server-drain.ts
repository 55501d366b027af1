import { Server as NetServer } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { InFlightResponses } from './in-flight-responses.js';

export interface HttpServerDrain {
  /**
   * Serves on for the drain window with every answer saying `Connection: close`, then stops
   * listening, closes the connections that stayed idle and waits for the last answer.
   */
  drain: () => Promise<void>;
  /** Cuts the connections still open (the drain ran out of time). */
  abort: () => void;
  /** True from the start of the drain (readiness answers 503 from then on). */
  isDraining: () => boolean;
}

/**
 * Graceful close of an HTTP server under keep-alive load, without resetting a request.
 *
 * A keep-alive client may send its next request on an idle connection at the very moment the
 * server closes it; that request is then reset, and such races happen under any steady load. So
 * idle connections are not closed when the drain starts. For `windowMs` the server goes on
 * serving (new connections included, since a load balancer may take a few probe periods to see
 * readiness fail), and every answer says `Connection: close`: the client drops that connection
 * after reading the answer and Node closes it after writing it, so a connection that carried one
 * such answer is gone without a race. Only connections that stayed silent for the whole window
 * are closed by the server at its end, with the listener; requests still running then finish.
 */
export function trackHttpDrain(server: Server, options: { windowMs: number }): HttpServerDrain {
  let draining = false;
  const sayClose = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  const inFlight = new InFlightResponses();
  // Before the app's own listener: a route that answers synchronously has sent its headers by
  // the time a listener added after it runs.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) sayClose(res);
    inFlight.track(res);
  });
  let drained: Promise<void> | undefined;
  let windowTimer: NodeJS.Timeout | undefined;
  return {
    drain: () => {
      drained ??= new Promise<void>((resolve, reject) => {
        draining = true;
        // Answers being written right now still get the header when theirs is not sent yet.
        inFlight.forEach(sayClose);
        windowTimer = setTimeout(() => {
          // Stop listening without `server.close()`'s own idle close, then close the idle ones
          // one event-loop turn later: a request whose bytes are already waiting on an idle
          // connection is read (and answered) instead of being cut.
          NetServer.prototype.close.call(server, (err?: Error) => (err ? reject(err) : resolve()));
          setImmediate(() => server.closeIdleConnections());
        }, options.windowMs);
      });
      return drained;
    },
    abort: () => {
      clearTimeout(windowTimer);
      server.closeAllConnections();
    },
    isDraining: () => draining,
  };
}
