import { Queue } from 'bullmq';
import type { RedisClient } from './redis-connection.js';
import type { Logger } from '../logger/logger.js';
import { QUEUE_NAMES, type QueueName } from './queue-names.js';

export type QueueRegistry = Readonly<Record<QueueName, Queue>>;

/** One producer-side Queue per name, sharing the caller's (fail-fast) connection. */
export function createQueueRegistry(connection: RedisClient, prefix: string, logger: Logger): QueueRegistry {
  const entries = QUEUE_NAMES.map((name) => {
    const queue = new Queue(name, { connection, prefix });
    queue.on('error', (err) => logger.warn({ err, queue: name }, 'queue error'));
    return [name, queue] as const;
  });
  return Object.freeze(Object.fromEntries(entries) as Record<QueueName, Queue>);
}

export async function closeQueueRegistry(queues: QueueRegistry): Promise<void> {
  await Promise.all(Object.values(queues).map((queue) => queue.close()));
}
