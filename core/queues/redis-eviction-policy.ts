import type { Logger } from '../logger/logger.js';
import { Cluster } from 'ioredis';
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
  return Promise.all(
    (redis instanceof Cluster ? redis.nodes('all') : [redis]).map(async (node) => {
      const info = await node.info('memory');
      const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'unknown';
      return { node: `${node.options.host ?? '?'}:${node.options.port ?? '?'}`, policy };
    }),
  );
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
