import { Agent, createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { trackHttpDrain } from '../../../api/http-server-drain.js';

// V8's own collector, reachable without starting Node with --expose-gc: the flag set at run time
// makes the next new context carry `gc`.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0;

/** A keep-alive server that answers every request one event-loop turn later, tracked for the drain. */
async function trackedServer(): Promise<{ server: Server; drain: ReturnType<typeof trackHttpDrain>; port: number }> {
  const server = createServer((_req, res) => setImmediate(() => res.end('answered')));
  const drain = trackHttpDrain(server, { windowMs: 50 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, drain, port: (server.address() as AddressInfo).port };
}

function post(port: number, agent: Agent): Promise<{ status?: number; connection?: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, agent, method: 'POST', path: '/token' }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    })
      .on('error', reject)
      .end('grant_type=client_credentials');
  });
}

/** `total` requests over `lanes` keep-alive connections, each lane sending its next after its answer. */
async function load(port: number, agent: Agent, total: number, lanes: number): Promise<void> {
  let sent = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (sent++ < total) await post(port, agent);
    }),
  );
}

describe('trackHttpDrain', () => {
  // Measured in the Jest worker's own heap, it holds only when the file runs alone: in the whole
  // suite, what earlier files left in the same worker is promoted too (22 MB measured). Run with
  // TEST_GC_RETENTION=1 and this file alone until it measures in a process of its own.
  (process.env.TEST_GC_RETENTION === '1' ? it : it.skip)(
    'keeps no finished response alive across young-generation collections',
    async () => {
      const { server, port } = await trackedServer();
      const agent = new Agent({ keepAlive: true, maxSockets: 10 });
      try {
        await load(port, agent, 500, 10); // warm: the tracker at its working size
        gc({ type: 'major' });
        let promotedBytes = 0;
        for (let round = 0; round < 3; round++) {
          await load(port, agent, 1000, 10);
          const before = oldSpaceUsed();
          // Two young collections: an object still reachable at both moves to the old generation.
          // Every request has been answered, so what moves is what a finished request left reachable.
          gc({ type: 'minor' });
          gc({ type: 'minor' });
          promotedBytes += oldSpaceUsed() - before;
        }
        // A finished request's objects are garbage at once; the test's own bookkeeping promotes a
        // few kilobytes a round. Kept alive, 3,000 requests' objects would be megabytes.
        expect(promotedBytes).toBeLessThan(256 * 1024);
      } finally {
        agent.destroy();
        server.close();
      }
    },
  );

  it('still says Connection: close on an answer in flight when the drain starts', async () => {
    let answer: (() => void) | undefined;
    const server = createServer((_req, res) => {
      answer = () => res.end('answered');
    });
    const drain = trackHttpDrain(server, { windowMs: 50 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent({ keepAlive: true });
    try {
      const response = post((server.address() as AddressInfo).port, agent);
      while (!answer) await new Promise((resolve) => setImmediate(resolve));
      const drained = drain.drain();
      answer();
      expect(await response).toEqual({ status: 200, connection: 'close' });
      await drained;
      expect(drain.isDraining()).toBe(true);
    } finally {
      agent.destroy();
      server.close();
    }
  });
});
