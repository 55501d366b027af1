import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait before answering (to provoke client timeouts). */
  delayMs?: number;
  /**
   * Answer only once this settles: the provider has the message (the request is recorded) but its
   * answer has not reached the sender yet, so a test can act in between.
   */
  until?: Promise<unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ProviderStub {
  url: string;
  requests: RecordedRequest[];
  close: () => Promise<void>;
}

/**
 * A local HTTP server answering each request with the next scripted answer (the last one repeats),
 * for provider failures the vendors' specs do not describe (Twilio's has no error responses).
 */
export async function startProviderStub(script: ScriptedAnswer[]): Promise<ProviderStub> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = script[Math.min(requests.length - 1, script.length - 1)] ?? { status: 500 };
      const reply = () => {
        const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
        res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
        res.end(body);
      };
      if (answer.until) void answer.until.finally(reply);
      else if (answer.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          reply();
        }, answer.delayMs);
        timers.add(timer);
      } else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
