import type { Logger } from '../logger/logger.js';
import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

interface NodePolicy {
  node: string;
  policy: string;
}

/**
 * Each node's `maxmemory-policy`, read from INFO (managed services often refuse CONFIG GET). On a
 * cluster, replicas too: a replica with another policy becomes an evicting master on failover.
 */
async function readEvictionPolicies(redis: RedisClient): Promise<NodePolicy[]> {
  // A cluster client knows its nodes only once ready (one Redis would queue the command instead).
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const policyOf = async (node: Redis) => /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1] ?? 'unknown';
  if (!(redis instanceof Cluster))
    return [{ node: `${redis.options.host ?? '?'}:${redis.options.port ?? '?'}`, policy: await policyOf(redis) }];
  // The cluster client connects to masters only; CLUSTER NODES names the replicas too.
  return Promise.all(
    clusterNodeAddresses(String(await redis.cluster('NODES'))).map(async ({ host, port }) => {
      const node = new Redis({
        ...redis.options.redisOptions,
        host,
        port,
        lazyConnect: true,
        maxRetriesPerRequest: 1,
        retryStrategy: () => null,
      });
      try {
        await node.connect();
        return { node: `${host}:${port}`, policy: await policyOf(node) };
      } finally {
        node.disconnect();
      }
    }),
  );
}

/** Addresses of the cluster's live nodes, masters and replicas, from a CLUSTER NODES answer. */
export function clusterNodeAddresses(clusterNodes: string): { host: string; port: number }[] {
  return clusterNodes
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length >= 3 && !/fail|noaddr|handshake/.test(fields[2] ?? ''))
    .map((fields) => {
      const address = (fields[1] ?? '').split('@')[0] ?? '';
      const colon = address.lastIndexOf(':');
      return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(colon + 1)) };
    })
    .filter(({ host, port }) => host !== '' && port > 0);
}

/**
 * Redis set to evict keys under memory pressure would delete queued jobs, sent-journal entries
 * and limit counters without a word: messages silently never sent, or sent twice, and limits
 * reset. Only `noeviction` (writes refused when memory is full, which the service reports) is safe.
 */
async function evictionProblem(redis: RedisClient): Promise<string | undefined> {
  const bad = (await readEvictionPolicies(redis)).filter(({ policy }) => policy !== 'noeviction');
  if (bad.length === 0) return undefined;
  const where = bad.map(({ node, policy }) => `${node} has ${policy}`).join(', ');
  return (
    `Redis maxmemory-policy must be noeviction (${where}): any other policy lets Redis delete queued jobs, ` +
    'sent-message records and rate-limit counters when memory runs short. Set `maxmemory-policy noeviction` ' +
    "in redis.conf (or your provider's parameter group) on every node"
  );
}

/** Workers refuse to start on an evicting Redis: the jobs they run are what eviction would lose. */
export async function requireNoEviction(redis: RedisClient): Promise<void> {
  const problem = await evictionProblem(redis);
  if (problem) throw new Error(problem);
}

/**
 * The API only warns: refusing requests would not protect anything the workers do not, and a
 * deployment being fixed keeps answering. An unreadable policy is reported, not fatal.
 */
export async function warnUnlessNoEviction(redis: RedisClient, logger: Logger): Promise<void> {
  try {
    const problem = await evictionProblem(redis);
    if (problem) logger.warn(problem);
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not read the Redis maxmemory-policy');
  }
}
