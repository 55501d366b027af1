import type { RedisClient } from '../core/platform/queues/redis-connection.js';
import type { Connection } from 'mongoose';
import type { Config } from '../core/platform/config/config.js';
import type { Logger } from '../core/platform/logger/logger.js';
import type { Metrics } from '../core/platform/metrics/metrics.js';
import type { DispatchRetry } from '../core/platform/queues/dispatch-retry.queue.js';
import type { QueueRegistry } from '../core/platform/queues/queue-registry.js';
import type { NotificationEndEvents } from '../core/notifications/notification-end-events.js';
import type { NotificationUserEvents } from '../core/notifications/notification-user-events.js';
import type { SigningKeyChanges } from '../core/auth/signing-key-changes.js';

/** Everything the HTTP edge needs, built once per process (or per test file). */
export interface ServiceContext {
  config: Config;
  logger: Logger;
  mongo: Connection;
  redis: RedisClient;
  queues: QueueRegistry;
  metrics: Metrics;
  /** Dispatch enqueue of the request path, retried in process while Redis is unreachable. */
  dispatch: DispatchRetry;
  /** Notifications reaching a final state, heard by every API process (waiting requests). */
  notificationEnds: NotificationEndEvents;
  /** Each user's notification events, for the open streams of every API process. */
  userEvents: NotificationUserEvents;
  /** "The signing keys changed", heard by every API process (a rotation reaches them at once). */
  signingKeyChanges: SigningKeyChanges;
}
