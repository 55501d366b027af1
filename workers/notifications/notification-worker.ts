import type { Config } from '../../core/platform/config/config.js';
import { createManagedWorker, drainWorker, runManagedWorker, type RunningWorker } from '../../core/platform/lifecycle/worker-lifecycle.js';
import { openWorkerResources } from '../../core/platform/lifecycle/worker-resources.js';
import { prepareWorkerStore } from '../prepare-worker-store.js';
import { startPeriodicTask } from '../../core/platform/lifecycle/periodic-task.js';
import { createShutdown } from '../../core/platform/lifecycle/shutdown.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { createCallbackDelivery } from '../../core/notifications/callback-delivery.service.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import { createNotificationsService } from '../../core/notifications/notifications.service.js';
import { appendUserEvent } from '../../core/notifications/notification-user-events.js';
import { createUserEventOutbox } from '../../core/notifications/user-event-outbox.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createCallbackCircuits } from '../../core/notifications/callback-circuits.js';
import { createCallbackHostSlots } from '../../core/notifications/callback-host-slots.js';
import { callbackBackoffMs, enqueueCallback, enqueueExpiry, requeueCallback } from '../../core/platform/queues/notification.queue.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { createPushDelivery } from '../../core/push/push-delivery.service.js';
import { createPushSendSlots } from '../../core/push/push-send-slots.js';
import { createPushSubscriptionsRepository } from '../../core/push/push-subscriptions.repository.js';
import { createVapidKeysCache } from '../../core/push/vapid-keys.js';
import { enqueuePushSends, pushBackoffMs } from '../../core/platform/queues/push.queue.js';
import { createExpireNotificationProcessor } from './expire-notification.processor.js';
import { createSendCallbackProcessor } from './send-callback.processor.js';
import { createSendPushProcessor } from './send-push.processor.js';

const SWEEP_BATCH = 1000;
// A callback still WAITING this long after its notification ended lost its job: queue it again.
const CALLBACK_REQUEUE_GRACE_MS = 30_000;
const RETENTION_INTERVAL_MS = 10 * 60_000;
// How often owed user events are looked for (each waits out USER_EVENT_GRACE_MS first).
const USER_EVENT_SWEEP_MS = 5000;

/**
 * The notification worker: expiry jobs (one delayed job per notification), the sweep that
 * expires whatever those jobs missed, retention of ended notifications, and signed callbacks on
 * their own queue so a slow or failing receiver never holds up expiries, and Web Push on a third
 * queue (a slow push service holds up neither).
 */
export async function startNotificationWorker(config: Config, logger: Logger, stopping?: AbortSignal): Promise<RunningWorker> {
  const log = logger.child({ worker: 'notification' });
  const { encryptionKey } = otpKeysFromConfig(config);
  const { mongo, workerRedis, redis, queues, closeSteps } = await openWorkerResources(
    config,
    log,
    prepareWorkerStore(encryptionKey),
    stopping,
  );
  const repository = createNotificationsRepository(mongo);
  const service = createNotificationsService({
    repository,
    users: createUsersRepository(mongo),
    enqueueExpiry: (uuid, expiresAt) => enqueueExpiry(queues.notification, uuid, expiresAt),
    enqueueCallback: (uuid) => enqueueCallback(queues['notification-callback'], uuid),
    requeueCallback: (uuid) => requeueCallback(queues['notification-callback'], uuid),
    logger: log,
    callbackPolicy: config.notifications.callbackAddresses,
  });
  const delivery = createCallbackDelivery({
    repository,
    clients: createClientsRepository(mongo),
    encryptionKey,
    timeoutMs: config.notifications.callbackTimeoutMs,
    policy: config.notifications.callbackAddresses,
    logger: log,
    hostSlots: createCallbackHostSlots({
      perHost: config.notifications.callbackConcurrencyPerHost,
      perEnterprise: config.notifications.callbackConcurrencyPerEnterprise,
    }),
    circuits: createCallbackCircuits({
      ...config.notifications.callbackCircuit,
      // A probe that neither answers nor fails by then lets another callback probe.
      probeTimeoutMs: config.notifications.callbackTimeoutMs + 1000,
      logger: log,
    }),
  });

  const expiries = createManagedWorker({
    queue: 'notification',
    processor: createExpireNotificationProcessor(service),
    connection: workerRedis,
    config,
    concurrency: config.concurrency.notification,
    logger: log,
  });
  const callbacks = createManagedWorker({
    queue: 'notification-callback',
    processor: createSendCallbackProcessor(delivery, config.notifications.callbackRetryBaseMs),
    connection: workerRedis,
    config,
    concurrency: config.notifications.callbackConcurrency,
    logger: log,
    backoffStrategy: (attemptsMade) => callbackBackoffMs(attemptsMade, config.notifications.callbackRetryBaseMs),
  });

  const pushes = createManagedWorker({
    queue: 'notification-push',
    processor: createSendPushProcessor(
      createPushDelivery({
        notifications: repository,
        subscriptions: createPushSubscriptionsRepository(mongo),
        vapidKeys: createVapidKeysCache(mongo, config.push, encryptionKey),
        vapidSubject: config.push.vapidSubject,
        encryptionKey,
        policy: config.push.endpointAddresses,
        timeoutMs: config.push.timeoutMs,
        enqueueSends: (uuid, ids) => enqueuePushSends(queues['notification-push'], uuid, ids),
        logger: log,
        slots: createPushSendSlots({ perUser: config.push.concurrencyPerUser, perEnterprise: config.push.concurrencyPerEnterprise }),
      }),
    ),
    connection: workerRedis,
    config,
    concurrency: config.push.concurrency,
    logger: log,
    backoffStrategy: (attemptsMade) => pushBackoffMs(attemptsMade, config.push.retryBaseMs),
  });

  // Events of notification changes the API wrote but never appended (it died, or Redis refused).
  const userEvents = createUserEventOutbox({
    repository,
    append: async (enterpriseId, userId, event) => {
      await appendUserEvent(redis, config.queuePrefix, enterpriseId, userId, event);
      return true;
    },
    logger: log,
  });
  const sweepUserEvents = async () => {
    const { appended, failed } = await userEvents.sweep();
    if (appended > 0 || failed > 0) log.info({ appended, failed }, 'owed user events appended');
  };
  const sweep = async () => {
    const { expired, callbacksRequeued } = await service.sweep({ batchSize: SWEEP_BATCH, callbackGraceMs: CALLBACK_REQUEUE_GRACE_MS });
    if (expired > 0 || callbacksRequeued > 0) log.info({ expired, callbacksRequeued }, 'notification sweep');
  };
  const purge = async () => {
    const purged = await service.purgeEnded(config.notifications.retentionDays);
    if (purged > 0) log.info({ purged }, 'ended notifications past retention deleted');
  };
  // At start: expire at once what fell due while no worker ran, and apply retention.
  await sweep().catch((err: unknown) => log.error({ err }, 'first notification sweep failed'));
  await purge().catch((err: unknown) => log.error({ err }, 'first retention run failed'));
  const sweeper = startPeriodicTask('notification sweep', sweep, config.notifications.sweepIntervalMs, log);
  const retention = startPeriodicTask('notification retention', purge, RETENTION_INTERVAL_MS, log);
  const userEventSweeper = startPeriodicTask('user event sweep', sweepUserEvents, USER_EVENT_SWEEP_MS, log);
  await runManagedWorker(expiries, log);
  await runManagedWorker(callbacks, log);
  await runManagedWorker(pushes, log);
  return {
    shutdown: createShutdown(
      [
        { name: 'sweeper', run: () => sweeper.stop() },
        { name: 'retention', run: () => retention.stop() },
        { name: 'user event sweep', run: () => userEventSweeper.stop() },
        // All three at once: each close() stops only its own worker, so closing them in turn let
        // the later ones take new jobs while the earlier ones drained.
        { name: 'expiry, callback and push jobs in flight', run: () => Promise.all([expiries, callbacks, pushes].map(drainWorker)) },
        ...closeSteps,
      ],
      log,
      config.shutdownDeadlineMs,
    ),
  };
}
