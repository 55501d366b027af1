import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FreezableProxy {
  /** host:port to connect to instead of the target. */
  address: string;
  /** From now on nothing passes in either direction: a store that hangs without closing. */
  freeze: () => void;
  /** Closes every connection open now (the store stays up), as a proxy in between may close idle ones. */
  resetConnections: () => void;
  /** The connection that carries the next request to the target is closed instead, the request unanswered. */
  closeConnectionOfNextRequest: () => void;
  close: () => Promise<void>;
}

/** A loopback TCP proxy to `target` (host:port) that can be made to stop answering or to close connections. */
export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  let frozen = false;
  let closeNext = false;
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk) => {
        if (closeNext && from === client) {
          closeNext = false;
          client.destroy();
          return;
        }
        if (!frozen) to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    freeze: () => {
      frozen = true;
    },
    resetConnections: () => {
      sockets.forEach((socket) => socket.destroy());
    },
    closeConnectionOfNextRequest: () => {
      closeNext = true;
    },
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
