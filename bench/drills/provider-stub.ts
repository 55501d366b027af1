// A stand-in for Twilio's Messages API that answers at once and records every message it gets,
// keyed by the trace the drill put in the message text: the drills count deliveries here.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SmsProviderStub {
  url: string;
  /** trace → arrival times of the messages that carried it */
  received: Map<string, number[]>;
  close: () => Promise<void>;
}

export async function startSmsProviderStub(): Promise<SmsProviderStub> {
  const received = new Map<string, number[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const text = new URLSearchParams(body).get('Body') ?? '';
      const trace = /trace ([A-Za-z0-9-]+)/.exec(text)?.[1];
      if (trace) received.set(trace, [...(received.get(trace) ?? []), Date.now()]);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sid: `SM${randomBytes(16).toString('hex')}`, status: 'queued' }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
