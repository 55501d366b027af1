import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** `held`: no answer until the test calls `release`, so it can act while an enrollment waits here. */
export type AnalyzerMode = 'compliant' | 'face-too-far' | 'error-500' | 'slow' | 'garbage' | 'held';

/** A local face analyzer speaking our contract (docs/enrollment.md); tests set its mode. */
export async function startFaceAnalyzerStub(): Promise<{
  url: string;
  setMode: (mode: AnalyzerMode) => void;
  requests: { image: string; format: string }[];
  /** Answers every held request: compliant. */
  release: () => void;
  close: () => Promise<void>;
}> {
  let mode: AnalyzerMode = 'compliant';
  const requests: { image: string; format: string }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const held: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { image: string; format: string });
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (mode === 'compliant') json(200, { compliant: true });
      else if (mode === 'face-too-far') json(200, { compliant: false, reasons: ['FACE_TOO_FAR', 'EYES_CLOSED'] });
      else if (mode === 'error-500') json(500, { error: 'boom' });
      else if (mode === 'garbage') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok?');
      else if (mode === 'held') held.push(() => json(200, { compliant: true }));
      else {
        const timer = setTimeout(() => json(200, { compliant: true }), 3000);
        timers.add(timer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/analyze`,
    setMode: (next) => {
      mode = next;
    },
    requests,
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
