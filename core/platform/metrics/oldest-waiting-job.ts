import type { Queue } from 'bullmq';
import type { RedisClient } from '../queues/redis-connection.js';

/**
 * BullMQ orders its prioritized set by score = priority * 2^32 + an arrival counter, so each
 * priority is a band ordered by arrival, and the set's two ends are the newest-but-first of the
 * highest priority and the newest of the lowest: a job starved in a middle band is at neither end.
 * The script visits the first (earliest-arrived) job of each band, jumping from band to band with
 * one ZRANGEBYSCORE each, and returns the earliest moment any of them began to wait (its
 * timestamp plus its delay, as the wait list's jobs are read), or nil when the set is empty. At
 * most ARGV[2] bands: a bounded cost at scrape time however many priorities are in use.
 */
const OLDEST_PRIORITIZED_SCRIPT = `
local band = 4294967296
local oldest = false
local from = '-inf'
for _ = 1, tonumber(ARGV[2]) do
  local head = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #head == 0 then break end
  local fields = redis.call('HMGET', ARGV[1] .. head[1], 'timestamp', 'delay')
  if fields[1] then
    local since = tonumber(fields[1]) + (tonumber(fields[2]) or 0)
    if not oldest or since < oldest then oldest = since end
  end
  from = (math.floor(tonumber(head[2]) / band) + 1) * band
end
return oldest
`;

/** Priority bands visited per scrape; fair dispatch uses one per fair share sent in a window. */
const MAX_BANDS = 256;

/** The client with the script as a command of its own. */
type ScriptRedis = RedisClient & {
  oldestPrioritizedSince(prioritizedKey: string, jobKeyPrefix: string, maxBands: number): Promise<number | null>;
};

/**
 * The client with the script defined once: ioredis then sends its SHA (EVALSHA) at each scrape and
 * the script's text only when a server does not know it yet (NOSCRIPT: first use, a restart or a
 * failover), on each node of a cluster alike.
 */
function withScript(redis: RedisClient): ScriptRedis {
  if (!('oldestPrioritizedSince' in redis)) {
    redis.defineCommand('oldestPrioritizedSince', { numberOfKeys: 1, lua: OLDEST_PRIORITIZED_SCRIPT });
  }
  return redis as ScriptRedis;
}

/**
 * When the job that has waited longest in `queue` (wait list or prioritized set) began to wait,
 * in epoch ms, or undefined when none waits. `redis` is the connection the queue was made with.
 */
export async function oldestWaitingSince(queue: Queue, redis: RedisClient): Promise<number | undefined> {
  const [waitHead, prioritized] = await Promise.all([
    // The wait list is first-in-first-out: its first job is its oldest.
    queue.getJobs(['wait'], 0, 0, true),
    withScript(redis).oldestPrioritizedSince(queue.keys.prioritized, queue.toKey(''), MAX_BANDS),
  ]);
  const starts = waitHead.filter(Boolean).map((job) => job.timestamp + (job.delay ?? 0));
  if (typeof prioritized === 'number') starts.push(prioritized);
  return starts.length > 0 ? Math.min(...starts) : undefined;
}
