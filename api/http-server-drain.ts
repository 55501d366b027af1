import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface HttpServerDrain {
  /**
   * Stops accepting connections, tells keep-alive clients to go and waits until every request
   * already read has been answered and its connection closed.
   */
  drain: () => Promise<void>;
  /** Cuts the connections still open (the drain ran out of time). */
  abort: () => void;
}

/**
 * Graceful close of an HTTP server under keep-alive load. `server.close()` alone only stops new
 * connections: open keep-alive connections go on carrying new requests until they idle out, and
 * cutting them later resets requests that were already read. Here every answer written from the
 * start of the drain says `Connection: close` (Node then closes the socket after it), idle
 * connections are closed at once, and requests being handled run to their end.
 */
export function trackHttpDrain(server: Server): HttpServerDrain {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const sayClose = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) sayClose(res);
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  let drained: Promise<void> | undefined;
  return {
    drain: () => {
      drained ??= new Promise<void>((resolve, reject) => {
        draining = true;
        inFlight.forEach(sayClose);
        // One turn of the event loop first: a request whose bytes are already waiting on an idle
        // connection is read (and answered) instead of being cut by the idle close below.
        setImmediate(() => {
          // Stops listening and closes idle connections (Node ≥ 19); busy ones close after their
          // answer because of the header above; the callback runs once the last one is gone.
          server.close((err) => (err ? reject(err) : resolve()));
        });
      });
      return drained;
    },
    abort: () => server.closeAllConnections(),
  };
}
