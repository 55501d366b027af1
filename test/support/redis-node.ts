import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../../core/platform/queues/redis-connection.js';

/**
 * A plain connection to the server that holds `key` (the one Redis, or the cluster master
 * serving its slot): for commands that see one server only, such as MONITOR.
 */
export async function connectToNodeOf(redis: RedisClient, key: string): Promise<Redis> {
  if (!(redis instanceof Cluster)) return redis.duplicate({ enableOfflineQueue: true });
  const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
  const [address] = redis.slots[slot] ?? [];
  if (!address) throw new Error(`no node serves slot ${slot}`);
  const [host, port] = address.split(':');
  return new Redis({ host, port: Number(port) });
}
