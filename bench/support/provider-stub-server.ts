// A Twilio Messages API stand-in in its own process: answers 201 like Twilio does, and records
// when each message arrived (wall clock) and for whom (`To`), so latency can be measured from the
// caller's send time. GET /__arrivals returns the records (and clears them with ?reset=1).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const delayMs = Number(process.env.STUB_DELAY_MS ?? '0');
let arrivals: [string, number][] = [];
let count = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    const url = req.url ?? '';
    if (req.method === 'GET' && url.startsWith('/__arrivals')) {
      const body = JSON.stringify({ count, arrivals });
      if (url.includes('reset=1')) arrivals = [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    if (req.method === 'POST' && /^\/2010-04-01\/Accounts\/[^/]+\/Messages\.json$/.test(url)) {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To') ?? '';
      count += 1;
      arrivals.push([to, at]);
      const sid = `SM${count.toString(16).padStart(32, '0')}`;
      const reply = () =>
        res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            sid,
            status: 'queued',
            to,
            from: form.get('From'),
            body: form.get('Body'),
            num_segments: '1',
            direction: 'outbound-api',
            api_version: '2010-04-01',
          }),
        );
      if (delayMs > 0) setTimeout(reply, delayMs);
      else reply();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":20404,"message":"not found"}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.env.PORT ?? '0'), '127.0.0.1', () => {
  console.log(`stub listening ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
