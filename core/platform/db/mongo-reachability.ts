import type { Connection } from 'mongoose';

/**
 * Fails MongoDB commands at once while the driver reaches no MongoDB server at all.
 *
 * Server selection waits up to its timeout (long enough to outlast a replica-set election) for
 * a suitable server. That wait is right during an election, when the other members still answer
 * and a new primary comes within seconds, but wrong when MongoDB is down altogether: then a
 * request should get its 503 (with Retry-After) at once instead of hanging, and a job should be
 * retried later instead of holding its worker. The driver's own view of the topology tells the
 * two apart: during an election some member is known; when MongoDB is down every server is
 * `Unknown` and the driver's last check of each failed. (A connection closed under a command also
 * makes its server `Unknown`, until the monitor has reconnected and checked it a moment later:
 * that is MongoDB answering again within milliseconds, so commands wait for it and the driver's
 * retry of a read goes through.) While MongoDB is down, every server selection of the connection (new ones, and those
 * already waiting, such as the retry of a write that the outage interrupted) fails with
 * {@link MongoUnreachableError}, which the edge maps to 503 like any unreachable-store error.
 *
 * This wraps `selectServer` of the driver's topology (an internal of the driver; the
 * MongoDB-outage and connection tests fail if a driver upgrade changes it).
 */
export class MongoUnreachableError extends Error {
  constructor() {
    super('MongoDB is not reachable: no server of the deployment answers');
    this.name = 'MongoUnreachableError';
  }
}

type SelectServer = (selector: unknown, options: { signal?: AbortSignal; [option: string]: unknown }) => Promise<unknown>;

interface Reachability {
  unreachable: boolean;
  probing: boolean;
  /** Set once the connection is closed on purpose: probing stops. */
  closed: boolean;
  /** Selections in progress, aborted when the deployment becomes unreachable. */
  waiting: Set<AbortController>;
}

const states = new WeakMap<Connection, Reachability>();

export interface TopologyDescriptionLike {
  servers: Map<string, { type: string }>;
}

/**
 * True when the driver knows servers, none answers, and its last check of each failed: MongoDB is
 * down, not electing, and not just reconnecting after a closed connection. `failedChecks` holds the
 * addresses whose latest check by the driver's monitor failed.
 */
export function noServerReachable(description: TopologyDescriptionLike, failedChecks: ReadonlySet<string>): boolean {
  const servers = [...description.servers.entries()];
  return servers.length > 0 && servers.every(([address, server]) => server.type === 'Unknown' && failedChecks.has(address));
}

/** How often, while nothing is reachable, the driver is asked to check the servers again. */
const PROBE_INTERVAL_MS = 500;

/**
 * While nothing is reachable, short server selections of our own follow each other: each new
 * selection makes the driver check the servers at once (otherwise it checks every 10 s), so the
 * connection notices within a second that MongoDB is back even when no command comes.
 */
function probeUntilReachable(state: Reachability, select: SelectServer): void {
  if (state.probing) return;
  state.probing = true;
  const probe = async () => {
    // Not readyState: mongoose reports "disconnected" while the servers are unreachable.
    while (state.unreachable && !state.closed) {
      const startedAt = Date.now();
      await select('nearest', { operationName: 'reachability probe', serverSelectionTimeoutMS: PROBE_INTERVAL_MS }).catch(
        (err: unknown) => {
          if ((err as { name?: unknown }).name === 'MongoTopologyClosedError') state.closed = true;
        },
      );
      const left = PROBE_INTERVAL_MS - (Date.now() - startedAt);
      if (left > 0 && state.unreachable) await new Promise((resolve) => setTimeout(resolve, left));
    }
    state.probing = false;
  };
  void probe();
}

/** Follows the connection's topology from now on (connectMongo calls it once connected). */
export function watchReachability(connection: Connection): void {
  if (states.has(connection)) return;
  const client = connection.getClient();
  const topology = (client as unknown as { topology?: { selectServer: SelectServer; description: TopologyDescriptionLike } }).topology;
  if (!topology) return;
  const state: Reachability = { unreachable: false, probing: false, closed: false, waiting: new Set() };
  states.set(connection, state);
  connection.once('close', () => {
    state.closed = true;
  });
  const select = topology.selectServer.bind(topology);
  const failedChecks = new Set<string>();
  topology.selectServer = (selector, options) => {
    if (state.unreachable) return Promise.reject(new MongoUnreachableError());
    const waiting = new AbortController();
    state.waiting.add(waiting);
    const signal = options.signal ? AbortSignal.any([options.signal, waiting.signal]) : waiting.signal;
    return select(selector, { ...options, signal }).finally(() => state.waiting.delete(waiting));
  };
  const follow = (description: TopologyDescriptionLike) => {
    state.unreachable = noServerReachable(description, failedChecks);
    if (!state.unreachable) return;
    for (const waiting of state.waiting) waiting.abort(new MongoUnreachableError());
    state.waiting.clear();
    probeUntilReachable(state, select);
  };
  // A failed check is reported before the server it marks `Unknown`; a server already `Unknown`
  // may not change its description again, so the failure is weighed at once too.
  client.on('serverHeartbeatFailed', (event) => {
    failedChecks.add(event.connectionId);
    follow(topology.description);
  });
  client.on('serverHeartbeatSucceeded', (event) => {
    failedChecks.delete(event.connectionId);
  });
  client.on('topologyDescriptionChanged', (event) => follow(event.newDescription as unknown as TopologyDescriptionLike));
}

/** True while the driver reaches no server of this connection's MongoDB. */
export function isKnownUnreachable(connection: Connection): boolean {
  return states.get(connection)?.unreachable ?? false;
}
