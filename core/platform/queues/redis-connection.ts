import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config/config.js';
import { leanRedisPipelines } from './lean-redis-pipelines.js';

/** A connection to one Redis or to a Redis Cluster: every Redis use takes either. */
export type RedisClient = Redis | Cluster;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2000);

/**
 * Builds the connection for either kind of target. On a cluster the per-node options go to
 * every node's connection; MOVED/ASK redirections and slot refreshes after a failover are
 * ioredis's, and a command that meets a cluster without a master for its slot
 * (CLUSTERDOWN, during a failover) is retried every `retryDelayOnClusterDown` ms.
 */
function createRedis(target: RedisTarget, nodeOptions: RedisOptions, clusterOptions: ClusterOptions = {}): RedisClient {
  leanRedisPipelines();
  if (target.kind === 'single') return new Redis(target.url, nodeOptions);
  const { enableOfflineQueue, ...perNode } = nodeOptions;
  return new Cluster(
    target.nodes.map(({ host, port }) => ({ host, port })),
    {
      redisOptions: perNode,
      clusterRetryStrategy: retryStrategy,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      slotsRefreshTimeout: 2000,
      // No periodic `slotsRefreshInterval`: a refresh in flight when the client is closed
      // schedules the next one anyway, and that timer keeps a stopped process alive. The map is
      // read again on MOVED, on errors, and by a readiness check that finds a slot unserved.
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...clusterOptions,
    },
  );
}

/**
 * Connection for producers on the request path: fails fast instead of queueing commands while
 * Redis is down, so the API answers 503 (or falls back to the sweeper) instead of hanging.
 */
export function createProducerRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  return createRedis(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy,
    ...options,
  });
}

/** Connection for BullMQ workers: blocking commands must be retried forever (BullMQ's requirement). */
export function createWorkerRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  return createRedis(target, { maxRetriesPerRequest: null, retryStrategy, ...options });
}

/** The servers that hold data: the one Redis, or every master of the cluster. */
export function dataNodes(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * Whether every slot has a master this client can reach. ioredis drops a lost node's
 * connection at once but keeps its slots until it reads the slot map again, so a master that
 * died leaves its slots (and so the queues, limits and journal under the hash tag) unserved
 * until its replica is promoted and the map is read again.
 */
function everySlotServed(cluster: Cluster): boolean {
  const masters = new Set(cluster.nodes('master').map((node) => `${node.options.host}:${node.options.port}`));
  for (let slot = 0; slot < 16384; slot++) {
    const owner = cluster.slots[slot]?.[0];
    if (owner === undefined || !masters.has(owner)) return false;
  }
  return true;
}

export async function pingRedis(redis: RedisClient, timeoutMs = 1000): Promise<void> {
  if (redis.status !== 'ready') throw new Error(`Redis is ${redis.status}`);
  if (redis instanceof Cluster && !everySlotServed(redis)) {
    // Read the map now: once the replica has taken over, the next check passes.
    redis.refreshSlotsCache();
    throw new Error('a Redis Cluster slot has no reachable master');
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    // On a cluster every master must answer.
    await Promise.race([
      Promise.all(dataNodes(redis).map((node) => node.ping())),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('Redis ping timed out')), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits (bounded) for the first connection, so a healthy start reports ready at once; a Redis
 * that is down at boot does not stop the process (readiness reports it, the sweeper catches up).
 */
export async function waitForRedis(redis: RedisClient, timeoutMs = 5000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
