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
  /**
   * The connections that carry the next `times` commands `commandName` on `collection` are closed
   * instead, those commands unanswered (a store lost in the middle of reading a cursor: getMore).
   * `times` 0 stops closing them.
   */
  closeConnectionOfCommand: (commandName: string, collection: string, times?: number) => void;
  /**
   * The answer to the next command named `commandName` (found in the bytes the client sends: the
   * command's name is its first field) is held back, with everything else that connection
   * receives, until release(): a command the server takes long to answer, like an index build on
   * a large collection. Other connections pass as before.
   */
  holdNextAnswerTo: (commandName: string) => void;
  /** The command whose answer is held: its name, the collection it names, and since when. */
  held: () => HeldCommand | undefined;
  /** Delivers what was held and stops holding. */
  release: () => void;
  close: () => Promise<void>;
}

export interface HeldCommand {
  command: string;
  collection: string;
  since: number;
}

/** The string value of the BSON field `name` in an OP_MSG chunk (the command's collection). */
function stringFieldAfter(chunk: Buffer, name: string): string | undefined {
  const at = chunk.indexOf(Buffer.from(`${name}\0`, 'latin1'));
  // 0x02: a BSON string; its value follows the name as an int32 length (with its NUL) and the bytes.
  if (at <= 0 || chunk[at - 1] !== 0x02) return undefined;
  const start = at + name.length + 1;
  const length = chunk.readInt32LE(start);
  return chunk.toString('utf8', start + 4, start + 4 + length - 1);
}

/** The name of the command an OP_MSG chunk begins with (its body's first field), if it begins one. */
function commandNameOf(chunk: Buffer): string | undefined {
  // Header (16 bytes, opCode 2013 at 12), flag bits (4), section kind 0 (the body), then the
  // body document: its length (4 bytes), its first field's type byte and the field's name.
  if (chunk.length < 27 || chunk.readInt32LE(12) !== 2013 || chunk[20] !== 0) return undefined;
  const end = chunk.indexOf(0, 26);
  return end === -1 ? undefined : chunk.toString('latin1', 26, end);
}

/** A loopback TCP proxy to `target` (host:port) that can be made to stop answering or to close connections. */
export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  let frozen = false;
  let closeNext = false;
  let closeOn: { commandName: string; collection: string; times: number } | undefined;
  let holdNext: string | undefined;
  let held: HeldCommand | undefined;
  // Per held connection: the client socket and what its server sent meanwhile.
  const holding = new Map<Socket, Buffer[]>();
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
        if (closeOn && from === client && commandNameOf(chunk) === closeOn.commandName) {
          const collection = stringFieldAfter(chunk, closeOn.commandName) ?? stringFieldAfter(chunk, 'collection');
          if (collection === closeOn.collection) {
            closeOn.times -= 1;
            if (closeOn.times === 0) closeOn = undefined;
            client.destroy();
            return;
          }
        }
        if (from === client && holdNext !== undefined) {
          const collection = stringFieldAfter(chunk, holdNext);
          if (collection !== undefined) {
            held = { command: holdNext, collection, since: Date.now() };
            holdNext = undefined;
            holding.set(client, []);
          }
        }
        const heldForClient = from === upstream ? holding.get(client) : undefined;
        if (heldForClient) heldForClient.push(chunk);
        else if (!frozen) to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        holding.delete(client);
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
    closeConnectionOfCommand: (commandName, collection, times = 1) => {
      closeOn = times > 0 ? { commandName, collection, times } : undefined;
    },
    holdNextAnswerTo: (commandName) => {
      holdNext = commandName;
    },
    held: () => held,
    release: () => {
      for (const [client, chunks] of holding) chunks.forEach((chunk) => client.write(chunk));
      holding.clear();
    },
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
