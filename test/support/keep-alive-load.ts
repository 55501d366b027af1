import { Agent, request } from 'node:http';

export interface LoadOutcome {
  /** When the request body was fully handed to the socket (ms since epoch). */
  writtenAt?: number;
  status?: number;
  connectionClose?: boolean;
  body?: string;
  error?: string;
}

/**
 * Keep-alive lanes: each sends one request after the other on a pooled connection until it is
 * stopped or told to go (`Connection: close`, or an error), recording every outcome.
 */
export function startKeepAliveLoad(options: { url: string; lanes: number; headers: Record<string, string>; body: () => unknown }) {
  const agent = new Agent({ keepAlive: true, maxSockets: options.lanes });
  const outcomes: LoadOutcome[] = [];
  let stopped = false;
  const send = () =>
    new Promise<LoadOutcome>((resolve) => {
      const outcome: LoadOutcome = {};
      outcomes.push(outcome);
      const payload = JSON.stringify(options.body());
      const req = request(
        options.url,
        {
          method: 'POST',
          agent,
          headers: { ...options.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => {
            outcome.status = res.statusCode;
            outcome.connectionClose = res.headers.connection === 'close';
            outcome.body = body;
            resolve(outcome);
          });
        },
      );
      req.on('finish', () => (outcome.writtenAt = Date.now()));
      req.on('error', (err: NodeJS.ErrnoException) => {
        outcome.error = err.code ?? err.message;
        resolve(outcome);
      });
      req.end(payload);
    });
  const lanes = Array.from({ length: options.lanes }, async () => {
    while (!stopped) {
      const outcome = await send();
      if (outcome.error !== undefined || outcome.connectionClose) return;
    }
  });
  return {
    outcomes,
    /** Resolves once every lane has ended (stopped, told to go, or failed). */
    finished: Promise.all(lanes).then(() => agent.destroy()),
    stop: () => {
      stopped = true;
    },
  };
}
