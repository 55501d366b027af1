// A loopback TCP proxy that counts what a client sends to MongoDB (OP_MSG commands, by command
// name) or Redis (RESP commands, by name): round trips per request or per job, measured rather
// than guessed. Only used by bench/roundtrips.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type Protocol = 'mongo' | 'redis';

export interface CountingProxy {
  url: string;
  counts: () => Record<string, number>;
  reset: () => void;
  close: () => Promise<void>;
}

function mongoCommands(buffer: Buffer, found: (name: string) => void): Buffer {
  let rest = buffer;
  while (rest.length >= 4) {
    const length = rest.readInt32LE(0);
    if (rest.length < length) break;
    const opCode = rest.readInt32LE(12);
    let name = `opcode ${opCode}`;
    // OP_MSG: header (16) + flagBits (4) + section kind 0 (1) + BSON size (4) + element type (1) + key.
    if (opCode === 2013 && rest[20] === 0) {
      const start = 26;
      const end = rest.indexOf(0, start);
      if (end > start) name = rest.toString('utf8', start, end);
    }
    found(name);
    rest = rest.subarray(length);
  }
  return Buffer.from(rest);
}

function redisCommands(buffer: Buffer, found: (name: string) => void): Buffer {
  let pos = 0;
  const line = (from: number): [string, number] | undefined => {
    const end = buffer.indexOf('\r\n', from);
    return end < 0 ? undefined : [buffer.toString('latin1', from, end), end + 2];
  };
  for (;;) {
    const header = line(pos);
    if (!header || !header[0].startsWith('*')) break;
    const parts = Number(header[0].slice(1));
    let at = header[1];
    let name = '';
    let complete = true;
    for (let i = 0; i < parts; i++) {
      const len = line(at);
      if (!len) {
        complete = false;
        break;
      }
      const size = Number(len[0].slice(1));
      if (buffer.length < len[1] + size + 2) {
        complete = false;
        break;
      }
      if (i === 0) name = buffer.toString('latin1', len[1], len[1] + size).toUpperCase();
      at = len[1] + size + 2;
    }
    if (!complete) break;
    found(name);
    pos = at;
  }
  return Buffer.from(buffer.subarray(pos));
}

export async function startCountingProxy(protocol: Protocol, targetPort: number): Promise<CountingProxy> {
  let counts: Record<string, number> = {};
  const sockets = new Set<Socket>();
  const found = (name: string) => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = (protocol === 'mongo' ? mongoCommands : redisCommands)(Buffer.concat([pending, chunk]), found);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${protocol === 'mongo' ? 'mongodb' : 'redis'}://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    reset: () => {
      counts = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
