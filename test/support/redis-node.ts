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

/**
 * Has Redis close the connections carrying `connectionName` that hold a subscription, on every node
 * of a cluster, as Redis does to a subscriber past its output buffer limit; returns how many. All
 * are found before any is closed, so a connection opened to replace one is not closed too.
 */
export async function closeSubscriberConnections(redis: RedisClient, connectionName: string): Promise<number> {
  await redis.ping();
  const servers = redis instanceof Cluster ? redis.nodes('all') : [redis];
  const subscribers: { server: Redis | Cluster; id: string }[] = [];
  for (const server of servers) {
    for (const line of String(await server.client('LIST')).split('\n')) {
      const id = /^id=(\d+) /.exec(line)?.[1];
      // A cluster client's connections for commands carry the same name: the subscriber is the one
      // subscribed (its name may carry a prefix of the client's).
      if (id && line.includes(`${connectionName} `) && line.includes(' sub=1 ')) subscribers.push({ server, id });
    }
  }
  let closed = 0;
  for (const { server, id } of subscribers) closed += Number(await server.client('KILL', 'ID', id));
  return closed;
}
