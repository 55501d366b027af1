import { Agent, request } from 'node:http';
import { wallMs } from './bench-kit.js';

export interface SentRequest {
  index: number;
  /** Wall-clock ms at which the request was scheduled (and sent, unless the client queued it). */
  scheduledAt: number;
  status?: number;
  /** Wall-clock ms at which the answer's last byte arrived. */
  answeredAt?: number;
  otpUuid?: string;
  error?: string;
}

/**
 * Open-loop load: request i is due at start + i/rate and is issued then whatever the answers to
 * earlier ones, so a slow server does not slow the offered rate (no coordinated omission).
 * `bodyOf(i)` gives request i's JSON body. Connections are capped (keep-alive), so requests the
 * server cannot take queue on the client, and that wait counts in their latency.
 */
export async function openLoopPost(
  url: string,
  headers: Record<string, string>,
  bodyOf: (i: number) => unknown,
  ratePerSecond: number,
  seconds: number,
  maxSockets = 64,
): Promise<SentRequest[]> {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const total = Math.floor(ratePerSecond * seconds);
  const sent: SentRequest[] = [];
  const pending: Promise<void>[] = [];
  const start = wallMs() + 20;
  let next = 0;
  const target = new URL(url);
  await new Promise<void>((done) => {
    const tick = () => {
      const now = wallMs();
      while (next < total && start + (next * 1000) / ratePerSecond <= now) {
        const entry: SentRequest = { index: next, scheduledAt: start + (next * 1000) / ratePerSecond };
        sent.push(entry);
        const payload = JSON.stringify(bodyOf(next));
        pending.push(
          new Promise<void>((settle) => {
            const req = request(
              {
                host: target.hostname,
                port: target.port,
                path: target.pathname,
                method: 'POST',
                agent,
                headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
              },
              (res) => {
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => {
                  entry.answeredAt = wallMs();
                  entry.status = res.statusCode;
                  const text = Buffer.concat(chunks).toString('utf8');
                  // An answer without a body (an enrollment's 201) is no error: it has no otpUuid.
                  try {
                    if (text !== '') entry.otpUuid = (JSON.parse(text) as { otpUuid?: string }).otpUuid;
                  } catch {
                    entry.error = 'unparsable answer';
                  }
                  settle();
                });
              },
            );
            req.on('error', (err) => {
              entry.error = err.message;
              settle();
            });
            req.end(payload);
          }),
        );
        next += 1;
      }
      if (next >= total) return done();
      setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
  });
  await Promise.all(pending);
  agent.destroy();
  return sent;
}
