/** One Redis server, or the seed nodes of a Redis Cluster (the client learns the rest from them). */
export type RedisTarget =
  | { readonly kind: 'single'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly { readonly host: string; readonly port: number }[] };

const SEED = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;

function parseSeed(entry: string): { host: string; port: number } | undefined {
  const match = SEED.exec(entry);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

/**
 * Which Redis to use: REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster). Exactly one must
 * be given: with both, which one a process used would depend on reading order, and two
 * processes of one deployment on different Redis would each send what the other already sent.
 */
export function readRedisTarget(raw: Record<string, unknown>): { target?: RedisTarget; problems: string[] } {
  const url = raw.REDIS_URL as string | undefined;
  const seeds = raw.REDIS_CLUSTER_NODES as string | undefined;
  if (url !== undefined && seeds !== undefined) {
    return { problems: ['REDIS_CLUSTER_NODES: give either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both'] };
  }
  if (seeds === undefined) {
    return url === undefined
      ? { problems: ['REDIS_URL: is required (or REDIS_CLUSTER_NODES for a Redis Cluster)'] }
      : { target: { kind: 'single', url }, problems: [] };
  }
  const entries = seeds
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => parseSeed(entry) === undefined);
  if (entries.length === 0 || bad.length > 0) {
    return {
      problems: [
        `REDIS_CLUSTER_NODES: must be comma-separated host:port seed nodes (e.g. 10.0.0.1:6379,10.0.0.2:6379); not valid: ${bad.join(', ') || seeds}`,
      ],
    };
  }
  const nodes = entries.map((entry) => Object.freeze(parseSeed(entry) as { host: string; port: number }));
  return { target: Object.freeze({ kind: 'cluster', nodes: Object.freeze(nodes) }), problems: [] };
}

/**
 * The BullMQ key prefix. On a cluster it is a hash tag, as BullMQ documents: its scripts touch
 * several keys of a queue at once, and every key of one script must be in one slot. The sent
 * journal and the limiters live under the same prefix, so each of their scripts and
 * transactions stays in one slot too.
 */
export function queuePrefixFor(prefix: string, target: RedisTarget): string {
  return target.kind === 'cluster' ? `{${prefix}}` : prefix;
}
