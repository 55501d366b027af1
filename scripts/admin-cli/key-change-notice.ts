import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishSigningKeyChange, signingKeyChangesChannel } from '../../core/auth/signing-key-changes.js';
import { queuePrefixFor, readRedisTarget, type RedisTarget } from '../../core/platform/config/redis-target.js';
import { readSettings } from '../../core/platform/config/settings-reader.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { createProducerRedis, waitForRedis } from '../../core/platform/queues/redis-connection.js';

/** REDIS_URL or REDIS_CLUSTER_NODES, else the local Redis `npm start` recorded; undefined when there is neither. */
function redisTarget(): { target?: RedisTarget; queuePrefix: string } {
  const { values } = readSettings(process.env, ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'QUEUE_PREFIX']);
  const record = join(projectRoot, '.local', 'redis.json');
  const local = existsSync(record) ? (JSON.parse(readFileSync(record, 'utf8')) as { url: string }).url : undefined;
  const given = values.REDIS_URL === undefined && values.REDIS_CLUSTER_NODES === undefined ? { ...values, REDIS_URL: local } : values;
  const { target } = readRedisTarget(given);
  return { target, queuePrefix: target ? queuePrefixFor(values.QUEUE_PREFIX, target) : values.QUEUE_PREFIX };
}

/**
 * Tells the running API processes that the signing keys changed, as the admin API does after a
 * rotation, so they read them at once. Returns why they were not told, if they were not: they
 * then follow at their next periodic read (SIGNING_KEY_RELOAD_SECONDS).
 */
export async function announceSigningKeyChange(): Promise<string | undefined> {
  const { target, queuePrefix } = redisTarget();
  if (!target) return 'no Redis is configured (REDIS_URL or REDIS_CLUSTER_NODES)';
  const redis = createProducerRedis(target);
  redis.on('error', () => undefined);
  try {
    if (!(await waitForRedis(redis, 3000))) return 'Redis is not reachable';
    await publishSigningKeyChange(redis, signingKeyChangesChannel(queuePrefix));
    return undefined;
  } catch (err) {
    return `Redis refused the notice: ${(err as Error).message}`;
  } finally {
    redis.disconnect();
  }
}
