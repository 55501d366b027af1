import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishSigningKeyChange, signingKeyChangesChannel } from '../../core/auth/signing-key-changes.js';
import { queuePrefixFor, readRedisTarget, type RedisTarget } from '../../core/platform/config/redis-target.js';
import { readSettings } from '../../core/platform/config/settings-reader.js';
import { projectRoot } from '../../core/platform/project-root.js';
import { createProducerRedis, waitForRedis } from '../../core/platform/queues/redis-connection.js';

/**
 * The Redis of the deployment the CLI works on: REDIS_URL or REDIS_CLUSTER_NODES; else, when the
 * CLI works on the local deployment `npm start` made (MONGODB_URI unset, the local MongoDB it
 * recorded), the local Redis it recorded (`localRedisUrl`). Undefined otherwise: the local Redis
 * of a checkout is never told of a rotation stored in another deployment's MongoDB, which would
 * reach none of its processes while the CLI said nothing.
 */
export function noticeRedisTarget(
  env: Record<string, string | undefined>,
  localRedisUrl: string | undefined,
): { target?: RedisTarget; queuePrefix: string } {
  const { values } = readSettings(env, ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'QUEUE_PREFIX', 'MONGODB_URI']);
  const noRedisGiven = values.REDIS_URL === undefined && values.REDIS_CLUSTER_NODES === undefined;
  const local = values.MONGODB_URI === undefined ? localRedisUrl : undefined;
  const { target } = readRedisTarget(noRedisGiven ? { ...values, REDIS_URL: local } : values);
  return { target, queuePrefix: target ? queuePrefixFor(values.QUEUE_PREFIX, target) : values.QUEUE_PREFIX };
}

/** The URL of the local Redis `npm start` recorded for this checkout, if any. */
function localRedisUrl(): string | undefined {
  const record = join(projectRoot, '.local', 'redis.json');
  return existsSync(record) ? (JSON.parse(readFileSync(record, 'utf8')) as { url: string }).url : undefined;
}

/**
 * Tells the running API processes that the signing keys changed, as the admin API does after a
 * rotation, so they read them at once. Returns why they were not told, if they were not: they
 * then follow at their next periodic read (SIGNING_KEY_RELOAD_SECONDS).
 */
export async function announceSigningKeyChange(): Promise<string | undefined> {
  const { target, queuePrefix } = noticeRedisTarget(process.env, localRedisUrl());
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
