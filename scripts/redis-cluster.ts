// `npm run services:redis-cluster [-- --replicas=1]`: a local Redis Cluster of 3 masters (and a
// replica each with --replicas=1) on free loopback ports, to run the service on a cluster
// (`REDIS_CLUSTER_NODES=<printed seeds> npm start`). Runs until Ctrl-C, then stops every node and
// removes its files.
import { startRedisCluster } from './local-redis-cluster.js';

const replicas = Number(process.argv.find((arg) => arg.startsWith('--replicas='))?.slice('--replicas='.length) ?? 0);
const cluster = await startRedisCluster({ replicasPerMaster: replicas });
process.stdout.write(
  `Redis Cluster of 3 masters${replicas > 0 ? ` with ${replicas} replica(s) each` : ''} is running (Ctrl-C stops it):\n` +
    `REDIS_CLUSTER_NODES=${cluster.seeds}\n`,
);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void cluster.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
