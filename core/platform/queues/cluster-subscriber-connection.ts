import type { Cluster, Redis } from 'ioredis';

/** Waits before subscribing through another node, after the first try that failed in a row. */
const moveDelayMs = (failedInARow: number) => Math.min(failedInARow * 200, 2000);

const nodeKey = (node: Redis) => `${node.options.host}:${node.options.port}`;

/** A node at random, another than `avoid` when the cluster has another. */
function pickNode(cluster: Cluster, avoid: string | undefined): Redis | undefined {
  const nodes = cluster.nodes('all');
  const others = nodes.filter((node) => nodeKey(node) !== avoid);
  const choice = others.length > 0 ? others : nodes;
  return choice[Math.floor(Math.random() * choice.length)];
}

/**
 * The connection a subscription lives on in a Redis Cluster, owned here rather than by ioredis.
 * A PUBLISH reaches the subscribers of every node of a cluster, so one plain connection to any
 * node (master or replica) hears the channel. ioredis's own cluster subscription replaces its
 * connection by one to another node without telling: the Cluster's `+node`/`-node` do not fire
 * when Redis closes the connection of a node that stays, and its subscriber's connection is a
 * private field a patch release may change. A listener that must catch up after a gap (a message
 * published meanwhile is lost) would never know; here `onConnection` is given each new
 * connection, and the subscription is made and told there. The cluster client only says which
 * nodes there are (`nodes()`, public).
 *
 * The connection does not reconnect: when it ends (the node went away, Redis closed it, the
 * network dropped it) another is opened at once to another node; while they keep failing each
 * next try waits 200 ms longer (at most 2 s). Only one connection is open at a time, so a message
 * is never heard twice. While the cluster knows no node (it is connecting), the first node it
 * learns of is tried at once.
 */
export function openClusterSubscriberConnection(cluster: Cluster, onConnection: (connection: Redis) => void): { close(): void } {
  let current: Redis | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let retry: (() => void) | undefined;
  let failedInARow = 0;

  const stopWaiting = () => {
    clearTimeout(timer);
    if (retry) cluster.off('+node', retry);
    retry = undefined;
  };
  const tryLater = (avoid: string | undefined) => {
    retry = () => open(avoid);
    timer = setTimeout(retry, moveDelayMs(failedInARow));
    failedInARow += 1;
  };
  const open = (avoid: string | undefined) => {
    stopWaiting();
    if (closed) return;
    const node = pickNode(cluster, avoid);
    if (!node) {
      tryLater(avoid);
      // The cluster is (re)connecting and knows no node yet: the first it learns of is tried at once.
      if (retry) cluster.once('+node', retry);
      return;
    }
    const connection = node.duplicate({
      lazyConnect: false,
      // A replica's node connection may be read-only; the subscription needs no such mode.
      readOnly: false,
      enableOfflineQueue: true,
      retryStrategy: () => null,
    });
    current = connection;
    connection.once('ready', () => {
      failedInARow = 0;
    });
    connection.once('end', () => {
      if (closed || current !== connection) return;
      current = undefined;
      tryLater(nodeKey(connection));
    });
    onConnection(connection);
  };
  open(undefined);

  return {
    close() {
      closed = true;
      stopWaiting();
      current?.disconnect();
      current = undefined;
    },
  };
}
