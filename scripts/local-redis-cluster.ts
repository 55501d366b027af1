// A Redis Cluster on loopback from Debian's `redis-server`, for tests, drills and trying the
// service on a cluster: 3 masters, optionally one replica each.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { findFreePort, isAlive, startRedisServer, type LocalService } from './local-services.js';

const run = promisify(execFile);

export interface ClusterNodeProcess extends LocalService {
  /** kill -9: the node vanishes as on a host failure (no shutdown, no last AOF write). */
  kill: () => Promise<void>;
}

export interface LocalRedisCluster {
  /** Where the nodes keep nodes.conf (and append-only files when asked). */
  dir: string;
  /** The REDIS_CLUSTER_NODES value: every node as a seed. */
  seeds: string;
  nodes: ClusterNodeProcess[];
  /** The node that currently serves `key`'s slot as master (it changes after a failover). */
  masterFor: (key: string) => Promise<ClusterNodeProcess>;
  /** Resolves once every slot is served and every node agrees the cluster is ok. */
  waitUntilHealthy: (timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
}

export interface RedisClusterOptions {
  masters?: number;
  /** 0 (the default) or more replicas per master, for failover. */
  replicasPerMaster?: number;
  /** How long a master may be unreachable before its replica is promoted. */
  nodeTimeoutMs?: number;
  /** Append-only files here (appendfsync everysec); without it nothing is written but nodes.conf. */
  dataDir?: string;
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await findFreePort());
  return [...ports];
}

/** CLUSTER INFO's fields, plus `replica_link`: a replica's link to its master (`connected` once in sync). */
async function clusterInfo(port: number): Promise<Record<string, string>> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    const text = (await client.call('CLUSTER', 'INFO')) as string;
    const role = (await client.call('ROLE')) as unknown[];
    const info = Object.fromEntries(text.split('\r\n').map((line) => line.split(':') as [string, string]));
    return { ...info, replica_link: role[0] === 'slave' ? String(role[3]) : 'master' };
  } finally {
    client.disconnect();
  }
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const count = masters * (1 + replicas);
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-redis-cluster-'));
  mkdirSync(dir, { recursive: true });
  // Two ports a node: clients, and the cluster bus (given explicitly: the default, port + 10000,
  // may be taken or beyond 65535).
  const ports = await distinctFreePorts(count * 2);
  const started: LocalService[] = [];
  const stopAll = async () => {
    await Promise.allSettled(started.map((node) => node.stop()));
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < count; i++) {
      const port = ports[2 * i] as number;
      const nodeDir = join(dir, String(port));
      started.push(
        await startRedisServer({
          port,
          ...(options.dataDir ? { dataDir: nodeDir } : {}),
          args: [
            // A replica's first sync writes an RDB file into the working directory: never the caller's.
            ...(options.dataDir ? [] : ['--dir', ensureDir(nodeDir)]),
            '--cluster-enabled',
            'yes',
            '--cluster-port',
            String(ports[2 * i + 1]),
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            String(options.nodeTimeoutMs ?? 5000),
          ],
        }),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...started.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
  } catch (err) {
    await stopAll();
    throw err;
  }

  const nodes: ClusterNodeProcess[] = started.map((node) => ({
    ...node,
    kill: async () => {
      process.kill(node.pid, 'SIGKILL');
      await node.stop();
    },
  }));
  const alive = () => nodes.filter((node) => isAlive(node.pid));

  async function waitUntilHealthy(timeoutMs = 30000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      const infos = await Promise.all(alive().map((node) => clusterInfo(node.port).catch(() => ({}) as Record<string, string>)));
      last = JSON.stringify(infos.map((info) => [info.cluster_state, info.cluster_slots_ok, info.replica_link]));
      const ok = (info: Record<string, string>) =>
        info.cluster_state === 'ok' && info.cluster_slots_ok === '16384' && ['master', 'connected'].includes(info.replica_link ?? '');
      if (infos.every(ok)) return;
      if (Date.now() > deadline) throw new Error(`Redis Cluster not healthy after ${timeoutMs} ms: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function masterFor(key: string): Promise<ClusterNodeProcess> {
    const [first] = alive();
    if (!first) throw new Error('no Redis Cluster node is running');
    const client = new Redis({ host: '127.0.0.1', port: first.port });
    try {
      const slot = (await client.call('CLUSTER', 'KEYSLOT', key)) as number;
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
      const node = nodes.find((candidate) => candidate.port === owner);
      if (!node) throw new Error(`no master serves slot ${slot}`);
      return node;
    } finally {
      client.disconnect();
    }
  }

  try {
    await waitUntilHealthy();
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    dir,
    seeds: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    nodes,
    masterFor,
    waitUntilHealthy,
    stop: stopAll,
  };
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
